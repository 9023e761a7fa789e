#!/usr/bin/env bash
# tune_vs_grid.sh — is `readlab tune` as good as an exhaustive grid, for a fraction of its time?
#
# A benchmark, not a test. For each target it:
#   1. runs the exhaustive grid once: psync × threads {1,2,4,8,16}; libaio and io_uring ×
#      queue size {1…256} × threads {1,2,3} × batch {1,2,4,…,min(qs,32)}; each point RUNTIME (2s)
#      after a 300 ms ramp, 4 KiB random reads, O_DIRECT;
#   2. runs `readlab tune --goal throughput --budget $BUDGET` (default 60s) on the same target;
#   3. re-measures the grid's best point and the tuner's pick interleaved (A B A B, ROUNDS rounds of
#      5 s) and prints: tuner wall time / grid wall time, and pick IOPS / grid-best IOPS (medians).
# Goal stated by the project: within 5 % of the grid's best in at most 15 % of its time.
#
# GRID_ext4 / GRID_loop="SECONDS IOPS ARGS…" reuse a grid measured earlier (as printed on its "grid:"
# line) instead of running it again; the final comparison is re-measured interleaved either way.
#
# Targets (TARGETS="ext4 loop"): ext4 = a prepared 1 GiB file under ${TMPDIR:-/tmp};
# loop = a loop device with --direct-io=on over a prepared 1 GiB file in /dev/shm (needs root).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
READLAB="${READLAB:-$root/target/release/readlab}"
[ -x "$READLAB" ] || (cd "$root" && cargo build --release -q)
TARGETS="${TARGETS:-ext4 loop}"
RUNTIME="${RUNTIME:-2s}"
BUDGET="${BUDGET:-60s}"
ROUNDS="${ROUNDS:-3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/readlab-tunegrid.XXXXXX")"
loopdev=""
cleanup() {
    [ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null || true
    rm -f /dev/shm/readlab-tunegrid-$$.dat
    rm -rf "$work"
}
trap cleanup EXIT

iops() { python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["iops"])'; }

grid() { # target -> prints "seconds best_iops best_args"
    local t="$1" start end best=0 bestargs="" a v
    start=$(date +%s.%N)
    local -a points=()
    for th in 1 2 4 8 16; do points+=("--engine psync --numjobs $th"); done
    for e in libaio uring; do
        for th in 1 2 3; do
            for qs in 1 2 4 8 16 32 64 128 256; do
                for b in 1 2 4 8 16 32; do
                    [ "$b" -le "$qs" ] && points+=("--engine $e --numjobs $th --iodepth $qs --batch $b")
                done
            done
        done
    done
    for a in "${points[@]}"; do
        # shellcheck disable=SC2086
        v=$("$READLAB" run $a --runtime "$RUNTIME" --ramp 300ms --output json -q "$t" | iops)
        if python3 -c "import sys; sys.exit(0 if $v > $best else 1)"; then best=$v; bestargs="$a"; fi
    done
    end=$(date +%s.%N)
    echo "$(python3 -c "print($end - $start)") $best $bestargs" 
}

median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

run_target() {
    local name="$1" t="$2"
    echo "== $name: $t"
    local reuse="GRID_$name"
    if [ -n "${!reuse:-}" ]; then
        read -r grid_s grid_best grid_args <<< "${!reuse}"
    else
        read -r grid_s grid_best grid_args < <(grid "$t")
    fi
    echo "grid: ${grid_s}s, best $grid_best IOPS with: $grid_args"
    local start end out="$work/tune-$name"
    start=$(date +%s.%N)
    "$READLAB" tune --goal throughput --budget "$BUDGET" --out "$out" "$t" > "$work/tune-$name.txt" 2>/dev/null || true
    end=$(date +%s.%N)
    local tune_s; tune_s=$(python3 -c "print($end - $start)")
    local pick; pick=$(python3 -c "import json; print(json.load(open('$out/profile-4k.json'))['label'])")
    echo "tune: ${tune_s}s, pick $pick"
    local -a a=() b=()
    for _ in $(seq "$ROUNDS"); do
        # shellcheck disable=SC2086
        a+=("$("$READLAB" run $grid_args --runtime 5s --ramp 1s --output json -q "$t" | iops)")
        b+=("$("$READLAB" run --profile "$out/profile-4k.json" --runtime 5s --output json -q "$t" | iops)")
    done
    local ma mb; ma=$(median "${a[@]}"); mb=$(median "${b[@]}")
    python3 - "$name" "$grid_s" "$tune_s" "$ma" "$mb" "$pick" "$grid_args" <<'PY'
import sys
name, gs, ts, ga, tb, pick, gargs = sys.argv[1:]
gs, ts, ga, tb = map(float, (gs, ts, ga, tb))
print(f"RESULT {name}: tuner time {ts:.0f}s / grid {gs:.0f}s = {100*ts/gs:.1f} %; "
      f"re-measured IOPS pick {pick} {tb:.0f} / grid best ({gargs}) {ga:.0f} = {tb/ga:.3f}")
PY
}

for target in $TARGETS; do
    case "$target" in
        ext4)
            f="$work/f.dat"; "$READLAB" prepare "$f" --size 1G >/dev/null
            run_target ext4 "$f" ;;
        loop)
            f=/dev/shm/readlab-tunegrid-$$.dat; "$READLAB" prepare "$f" --size 1G >/dev/null
            loopdev=$(losetup --find --show --direct-io=on "$f")
            run_target loop "$loopdev"
            losetup -d "$loopdev"; loopdev="" ;;
        *) echo "unknown target $target" >&2; exit 2 ;;
    esac
done
