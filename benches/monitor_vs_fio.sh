#!/usr/bin/env bash
# monitor_vs_fio.sh — `readlab monitor` beside a fio job, and the monitor's own cost.
#
# A benchmark, not a test: it prints numbers, it never fails on them (tests/monitor_fio.rs holds
# the 5 % check).
#
# Usage:
#   benches/monitor_vs_fio.sh
#   RUNTIME=20 BS=4k QD=32 HZ=10 benches/monitor_vs_fio.sh
#
# 1. On a loop device over a /dev/shm file (direct I/O on), fio runs randread $BS io_uring QD$QD
#    for $RUNTIME s in a tmux window (in the background without tmux) while
#      readlab monitor DEV --count $((RUNTIME + 2)) --thread-hz $HZ --json mon.json
#    runs in this terminal. Printed: fio's IOPS (its JSON summary) against the device's reads/s
#    the monitor counted over the same I/Os (all reads it saw / fio's runtime), and the
#    per-second series side by side (fio's --write_iops_log at 1 s against the monitor's samples,
#    aligned by fio's start).
# 2. The monitor's own CPU at $HZ thread samples/s: the sampler thread's CPU time (measured by
#    itself) over the run above (no process), then sampling a busy readlab run (--pid, the run's
#    worker threads and io_uring workers), then attached to a run (`run --monitor`).
set -euo pipefail
cd "$(dirname "$0")/.."
R=${R:-target/release/readlab}
RUNTIME=${RUNTIME:-10}
BS=${BS:-4k}
QD=${QD:-32}
HZ=${HZ:-10}
[ -x "$R" ] || cargo build --release
command -v fio >/dev/null || { echo "fio is missing (scripts/test-deps)" >&2; exit 1; }
W=$(mktemp -d /tmp/readlab-monfio.XXXXXX)
BACK=/dev/shm/readlab-monfio-$$
DEV=""
SOCK=readlab-monfio-$$
cleanup() {
    command -v tmux >/dev/null && tmux -L "$SOCK" kill-server 2>/dev/null || true
    [ -n "$DEV" ] && losetup -d "$DEV" 2>/dev/null || true
    rm -f "$BACK"
    rm -rf "$W"
}
trap cleanup EXIT
"$R" prepare "$BACK" --size 512M >/dev/null
DEV=$(losetup --find --show --direct-io=on "$BACK")
NAME=${DEV#/dev/}
echo "== 1. readlab monitor beside fio on $DEV ($BS randread, io_uring QD$QD, $RUNTIME s)"
FIO="fio --name=beside --filename=$DEV --direct=1 --rw=randread --bs=$BS --ioengine=io_uring \
--iodepth=$QD --time_based --runtime=$RUNTIME --write_iops_log=$W/fio --log_avg_msec=1000 \
--output-format=json --output=$W/fio.json; touch $W/fio.done"
"$R" monitor "$DEV" --count $((RUNTIME + 2)) --thread-hz "$HZ" --json "$W/mon.json" &
MON=$!
sleep 1
if command -v tmux >/dev/null; then
    tmux -L "$SOCK" new-session -d -s fio "$FIO"
else
    sh -c "$FIO" &
fi
wait "$MON"
for _ in $(seq 1 100); do [ -e "$W/fio.done" ] && break; sleep 0.2; done
python3 - "$W" "$NAME" <<'EOF'
import json, sys
w, name = sys.argv[1], sys.argv[2]
fio = json.load(open(f"{w}/fio.json"))["jobs"][0]["read"]
mon = json.load(open(f"{w}/mon.json"))
runtime = fio["runtime"] / 1000
reads = [next(d for d in s["devices"] if d["name"] == name) for s in mon["samples"]]
total = sum(d["reads"] for d in reads)
print(f"fio: {fio['total_ios']} I/Os in {runtime:.3f} s = {fio['iops']:.0f} IOPS")
print(f"monitor: {total} device reads while fio ran = {total / runtime:.0f} reads/s "
      f"({100 * (total / runtime / fio['iops'] - 1):+.2f} % against fio)")
log = [l.split(",") for l in open(f"{w}/fio_iops.1.log")]
print("per second: fio (its iops log, 1 s averages) | monitor (device reads/s, its samples)")
active = [d["read_iops"] for d in reads if d["read_iops"] > 0]
for i in range(max(len(log), len(active))):
    f = f"{float(log[i][1]):9.0f}" if i < len(log) else " " * 9
    m = f"{active[i]:9.0f}" if i < len(active) else ""
    print(f"  {i + 1:3d}  {f} | {m}")
print(f"monitor's sampler: {mon['sampler_cpu_pct']:.2f} % of a core "
      f"({mon['options']['thread_hz']} thread samples/s, no process)")
EOF
echo
echo "== 2. the monitor's own CPU at $HZ thread samples/s"
"$R" run --engine uring --buffered --iodepth 16 --numjobs 4 --runtime $((RUNTIME + 4))s -q \
    "$BACK" >/dev/null 2>&1 &
RUN=$!
sleep 1
"$R" monitor "$DEV" --pid "$RUN" --count "$RUNTIME" --thread-hz "$HZ" --json "$W/pid.json" \
    >/dev/null 2>&1 || true
wait "$RUN" || true
python3 - "$W/pid.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
thr = [sum(k["threads"] for k in s["threads"]["kinds"] if k["kind"] != "other") for s in m["samples"]]
print(f"--pid of a readlab run (4 workers, buffered io_uring on tmpfs): "
      f"{m['sampler_cpu_pct']:.2f} % of a core, {sum(thr) / max(len(thr), 1):.1f} threads sampled "
      f"{m['options']['thread_hz']} times/s")
EOF
"$R" run --engine uring --iodepth 32 --runtime "${RUNTIME}s" --monitor --output json -q "$DEV" \
    2>/dev/null >"$W/run.json"
python3 - "$W/run.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["monitor"]
print(f"run --monitor (uring QD32 on the loop device): sampler {m['sampler_cpu_pct']:.2f} % of a core; "
      f"the run's own CPU {d['result']['cpu']['app']['pct_of_core']:.1f} % of a core "
      f"(the sampler is left out of it)")
EOF
