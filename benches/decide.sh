#!/usr/bin/env bash
# How often readlab's decisions are right, on ground truth the kernel sets (issue 41): a loop
# device over a /dev/shm file, throttled by cgroup v1's blkio.throttle.read_iops_device to a known
# rate. Each kind of trial is repeated TRIALS times, the kinds interleaved trial by trial, and the
# error rates printed with their counts:
#
#   A/A       psync and pvsync2 at QD1 on the device throttled to 4,000 IOPS (the throttle is the
#             bottleneck: the same speed through two interfaces), a busy loop on one core beside:
#             a "winner" is an error (the rule promises at most 5 %).
#   gap       the same configuration throttled to 4,000 and to 4,400 IOPS (10 % apart; a 1 s ramp
#             leaves out the burst the throttle lets through first), run one
#             after the other (which first alternates), then `readlab compare`: the call must say
#             the faster is faster and its interval must hold the true 10 %.
#   big gap   `run --engine uring --iodepth 1,32 --runtime 2s` unthrottled: decided in the first
#             pass (no race record), U32B1 fastest.
#   main job  `readlab` itself (the default job) where a user runs it (target/decide-main/, on the
#             disk): "fastest 4K random" decided (a winner or equal within 5 %), and its wall time.
#
# Usage: bash benches/decide.sh [TRIALS] [MAIN_JOB_RUNS]   (default 20 and 10; as root; about
# 30 minutes at the defaults). Builds the release binary first.
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-20}
main_runs=${2:-10}
cargo build --release --quiet
bin=$PWD/target/release/readlab
work=$(mktemp -d /dev/shm/readlab-decide.XXXXXX)
cg=/sys/fs/cgroup/blkio/readlab-decide-$$
busy=""
cleanup() {
    [ -n "$busy" ] && kill "$busy" 2>/dev/null || true
    [ -n "${dev:-}" ] && losetup -d "$dev" 2>/dev/null || true
    rmdir "$cg" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
[ -f /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ] ||
    { echo "decide.sh: no cgroup v1 blkio throttle here" >&2; exit 2; }
"$bin" prepare "$work/data" --size 256M >/dev/null
dev=$(losetup --find --show --direct-io=on "$work/data")
mkdir -p "$cg"
majmin=$(printf '%d:%d' "0x$(stat -c %t "$dev")" "0x$(stat -c %T "$dev")")
throttle() { echo "$majmin $1" >"$cg/blkio.throttle.read_iops_device"; }
# readlab inside the throttled cgroup
in_cg() { sh -c 'echo $$ > "$0/cgroup.procs" && shift && exec "$@"' "$cg" x "$@"; }
# the "fastest" finding of a run's JSON documents: call and gap, via `readlab report`'s verdict
fastest() {
    "$bin" report "$1" --format json -o "$work/v.json" >/dev/null 2>&1
    python3 - "$work/v.json" <<'EOF'
import json, sys
v = json.load(open(sys.argv[1]))["verdict"]
for t in v:
    for g in t["groups"]:
        for f in g["findings"]:
            if f["verdict"] == "fastest" and g["bs"] == 4096:
                gap = f.get("gap") or {}
                print(f["call"], f["label"], gap.get("lo"), gap.get("hi"), gap.get("basis"))
                sys.exit(0)
print("none - None None None")
EOF
}

aa_win=0 aa_n=0 gap_ok=0 gap_hold=0 gap_n=0 big_ok=0 big_first=0 big_n=0
for t in $(seq 1 "$trials"); do
    # A/A, a busy loop on one core beside
    throttle 4000
    sh -c 'while :; do :; done' & busy=$!
    in_cg "$bin" run --engine psync,pvsync2 --runtime 2s --ramp 1s -q --output json "$dev" >"$work/aa.json"
    kill "$busy"; wait "$busy" 2>/dev/null || true; busy=""
    read -r call label _ _ basis < <(fastest "$work/aa.json")
    aa_n=$((aa_n + 1))
    [ "$call" = ahead ] && aa_win=$((aa_win + 1))
    echo "trial $t A/A: $call $label ($basis)" >&2

    # a known 10 % gap, the order alternating
    first=4000 second=4400
    [ $((t % 2)) -eq 0 ] && first=4400 second=4000
    throttle "$first"
    in_cg "$bin" run --engine psync --runtime 2s --ramp 1s -q --json "$work/g1.json" "$dev" >/dev/null
    throttle "$second"
    in_cg "$bin" run --engine psync --runtime 2s --ramp 1s -q --json "$work/g2.json" "$dev" >/dev/null
    slow=$work/g1.json fast=$work/g2.json
    [ "$first" -eq 4400 ] && slow=$work/g2.json fast=$work/g1.json
    "$bin" compare "$slow" "$fast" --output json >"$work/cmp.json"
    read -r beyond lo hi < <(python3 - "$work/cmp.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
d = c["rows"][0]["figures"]["iops"]
print(d.get("beyond_noise"), d.get("lo"), d.get("hi"))
EOF
)
    gap_n=$((gap_n + 1))
    if [ "$beyond" = True ] && python3 -c "import sys; sys.exit(0 if float('$lo') > 0 else 1)"; then
        gap_ok=$((gap_ok + 1))
    fi
    python3 -c "import sys; sys.exit(0 if float('$lo') <= 0.1 <= float('$hi') else 1)" 2>/dev/null &&
        gap_hold=$((gap_hold + 1))
    echo "trial $t gap: beyond the noise $beyond, interval $lo–$hi" >&2

    # a big gap, unthrottled (the cgroup is left)
    "$bin" run --engine uring --iodepth 1,32 --runtime 2s -q --output json "$dev" >"$work/big.json"
    read -r call label _ _ basis < <(fastest "$work/big.json")
    big_n=$((big_n + 1))
    [ "$call" = ahead ] && [ "$label" = U32B1 ] && big_ok=$((big_ok + 1))
    [ "$basis" = runs ] && big_first=$((big_first + 1))
    echo "trial $t big gap: $call $label ($basis)" >&2
done

main_ok=0 main_n=0 main_max=0
for t in $(seq 1 "$main_runs"); do
    mkdir -p target/decide-main
    s=$SECONDS
    (cd target/decide-main && "$bin" >"$work/main.txt" 2>&1) || true
    took=$((SECONDS - s))
    [ "$took" -gt "$main_max" ] && main_max=$took
    read -r call label _ _ basis < <(fastest target/decide-main/readlab-quick.jsonl) || true
    main_n=$((main_n + 1))
    case $call in ahead | equal) main_ok=$((main_ok + 1)) ;; esac
    echo "main job $t: $call $label ($basis), $took s" >&2
done

printf '\n%-44s %8s %8s\n' "decide.sh ($(date -u +%F), $(nproc) cores)" "count" "rate"
# a rate's row; none for a kind of trial not run (TRIALS or MAIN_JOB_RUNS 0)
row() {
    [ "$3" -gt 0 ] || return 0
    printf '%-44s %4d/%-4d %7.1f %%\n' "$1" "$2" "$3" "$(echo "100 * $2 / $3" | bc -l)"
}
row "A/A called a winner (at most 5 %)" "$aa_win" "$aa_n"
row "10 % gap called, right direction" "$gap_ok" "$gap_n"
row "10 % gap: interval holds 10 %" "$gap_hold" "$gap_n"
row "QD1 vs QD32: U32B1 ahead" "$big_ok" "$big_n"
row "QD1 vs QD32: decided in the first pass" "$big_first" "$big_n"
row "main job: fastest 4K random decided" "$main_ok" "$main_n"
[ "$main_n" -eq 0 ] || printf '%-44s %8s s\n' "main job: longest run" "$main_max"
