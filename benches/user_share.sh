#!/usr/bin/env bash
# user_share.sh — how much of readlab's and fio's CPU per I/O is user space, sampled in the run's
# steady window, and what that leaves for the CPU/IO goal of benches/vs_fio.sh (issue 24).
#
#   TARGET=/dev/loop0 WORKLOADS="psync uring" benches/user_share.sh
#
# For each workload, ROUNDS times, readlab then fio: the tool runs RAMP + RUNTIME; from RAMP + 0.3 s
# `perf record -a -e cpu-clock` samples the whole machine for RUNTIME - 0.5 s (so neither tool's
# start-up, nor readlab's self-measurement after its run, is in the profile); the samples of the
# tool's threads (comm readlab*, fio*, and io_uring's iou-* workers) are split into kernel and user.
# vs_fio.sh's "floor" column splits each tool's CPU by its clock-tick accounting instead; this is
# the second, independent method.
#
# Output per round and tool: kernel %, user %, and the four busiest user-space functions. Then per
# workload: the medians, and `fio kernel` = the CPU/IO ratio a tool doing the same kernel work with
# no user-space cost at all would reach. A cell whose `fio kernel` is above 0.9 cannot meet the goal.
# The user-space function right after a system call (libc's syscall, __libc_pread, the engine's
# submit) also collects the samples of timer interrupts that were held back in the kernel.
#
# Settings (environment): TARGET (required: a file or device both tools read), WORKLOADS (psync
# libaio uring uring-fixed), ROUNDS (3), RUNTIME (4, seconds), RAMP (1), BS (4k), QD (32),
# MODE (direct | buffered), READLAB (target/release/readlab), FIO (fio), FREQ (4999 samples/s).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
source "$here/workloads.sh"
TARGET="${TARGET:-}"
WORKLOADS="${WORKLOADS:-$WORKLOAD_NAMES}"
ROUNDS="${ROUNDS:-3}"
RUNTIME="${RUNTIME:-4}"
RAMP="${RAMP:-1}"
BS="${BS:-4k}"
QD="${QD:-32}"
MODE="${MODE:-direct}"
READLAB="${READLAB:-$root/target/release/readlab}"
FIO="${FIO:-fio}"
FREQ="${FREQ:-4999}"

die() { echo "user_share.sh: $*" >&2; exit 2; }
[[ -n "$TARGET" && -e "$TARGET" ]] || die "TARGET=file-or-device is required (both tools read it)"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer"
[[ "$RUNTIME" =~ ^[1-9][0-9]*$ && "$RAMP" =~ ^[0-9]+$ ]] || die "RUNTIME and RAMP are whole seconds"
((RUNTIME >= 2)) || die "RUNTIME must be at least 2 (the profile leaves 0.5 s out)"
[[ "$MODE" == direct || "$MODE" == buffered ]] || die "MODE is direct or buffered"
for w in $WORKLOADS; do is_workload "$w" || die "unknown workload '$w' ($WORKLOAD_NAMES)"; done
command -v perf >/dev/null || die "perf is needed (apt install linux-perf)"
command -v "$FIO" >/dev/null || die "fio not found: FIO=path"
[[ -x "$READLAB" ]] || (cd "$root" && cargo build --release --quiet)

if [[ "$MODE" == direct ]]; then rl_mode=(--direct) fio_mode=(--direct=1); else rl_mode=(--buffered) fio_mode=(--direct=0 --invalidate=0); fi

work="$(mktemp -d)"
trap 'rm -rf -- "$work"' EXIT
window_from=$(python3 -c "print($RAMP + 0.3)")
window_len=$(python3 -c "print($RUNTIME - 0.5)")

# share TOOL WORKLOAD ROUND: the kernel/user split of the tool's samples, one line, and a record
share() {
    perf report -i "$work/perf.data" --sort comm,sym --stdio -q 2>/dev/null >"$work/report.txt" || true
    python3 - "$1" "$2" "$3" "$work" <<'PY'
import json, re, sys
tool, w, r, work = sys.argv[1:5]
prefix = ("readlab", "iou-") if tool == "readlab" else ("fio", "iou-")
kernel = user = 0.0
funcs = {}
for line in open(f"{work}/report.txt"):
    m = re.match(r"\s*([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)", line)
    if not m or not m.group(2).startswith(prefix):
        continue
    p = float(m.group(1))
    if m.group(3) == "k":
        kernel += p
    else:
        user += p
        name = m.group(4).strip()[:32]
        funcs[name] = funcs.get(name, 0.0) + p
total = kernel + user
if total == 0:
    print(f"  {w} round {r} {tool:<7}: no samples of the tool's threads (is perf allowed? perf_event_paranoid)")
    sys.exit(0)
top = sorted(funcs.items(), key=lambda kv: -kv[1])[:4]
print(f"  {w} round {r} {tool:<7}: kernel {100 * kernel / total:5.1f} %  user {100 * user / total:5.1f} %   "
      + ", ".join(f"{n} {100 * p / total:.1f}" for n, p in top))
with open(f"{work}/shares.jsonl", "a") as f:
    f.write(json.dumps({"w": w, "tool": tool, "user": user / total}) + "\n")
PY
}

echo "user-space share of CPU in the steady window: $TARGET ($MODE), bs=$BS, qd=$QD, ${RUNTIME}s + ${RAMP}s ramp, $ROUNDS round(s)"
echo "$(uname -sr); $("$FIO" --version); perf -F $FREQ -a, window ${window_len}s from ${window_from}s"
for w in $WORKLOADS; do
    read -r -a rle <<<"$(rl_engine "$w")"
    read -r -a fie <<<"$(fio_engine "$w")"
    for ((r = 1; r <= ROUNDS; r++)); do
        for tool in readlab fio; do
            if [[ "$tool" == readlab ]]; then
                "$READLAB" run "${rle[@]}" --rw randread --bs "$BS" --runtime "${RUNTIME}s" --ramp "${RAMP}s" \
                    "${rl_mode[@]}" -q --output json "$TARGET" >/dev/null 2>&1 &
            else
                "$FIO" --name=x "${fie[@]}" --rw=randread --bs="$BS" "${fio_mode[@]}" --time_based \
                    --runtime="$RUNTIME" --ramp_time="$RAMP" --norandommap --randrepeat=0 \
                    --filename="$TARGET" --output-format=json >/dev/null 2>&1 &
            fi
            pid=$!
            sleep "$window_from"
            perf record -q -a -e cpu-clock -F "$FREQ" -o "$work/perf.data" -- sleep "$window_len" 2>/dev/null || true
            wait "$pid" || die "$tool failed on $w (run it by hand to see why)"
            share "$tool" "$w" "$r"
        done
    done
done
echo
python3 - "$work" <<'PY'
import json, os, statistics, sys
path = os.path.join(sys.argv[1], "shares.jsonl")
rows = [json.loads(l) for l in open(path)] if os.path.exists(path) else []
order = []
for x in rows:
    if x["w"] not in order:
        order.append(x["w"])
print("medians: user share of each tool's CPU; fio kernel = the CPU/IO ratio at zero user-space cost")
print(f"  {'workload':<12} {'readlab user':>12} {'fio user':>9} {'fio kernel':>10}")
for w in order:
    rl = statistics.median(x["user"] for x in rows if x["w"] == w and x["tool"] == "readlab")
    fi = statistics.median(x["user"] for x in rows if x["w"] == w and x["tool"] == "fio")
    mark = "  cannot reach 0.9" if 1 - fi > 0.9 else ""
    print(f"  {w:<12} {100 * rl:>11.1f}% {100 * fi:>8.1f}% {1 - fi:>10.3f}{mark}")
PY
