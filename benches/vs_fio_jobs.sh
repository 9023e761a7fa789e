#!/usr/bin/env bash
# vs_fio_jobs.sh — readlab and fio run the same job files; per job, IOPS and mean latency.
#
# A benchmark, not a test: it prints numbers and ratios, it never fails on them.
#
# Usage:
#   benches/vs_fio_jobs.sh [JOB.fio …]
#   ROUNDS=5 RUNTIME=2s benches/vs_fio_jobs.sh tests/fixtures/fio-corpus/*.fio
#
# Each job file (default: every file of tests/fixtures/fio-corpus) has TARGET replaced by the
# file read and runtime= by $RUNTIME, then runs ROUNDS times through each tool, interleaved
# (fio readlab, readlab fio, …) so that the machine's drift hits both alike:
#   fio --output-format=json JOB            (in a scratch directory: its logs land there)
#   readlab run --job JOB -q --output json --budget 0
# Per job (fio's numjobs clones summed, as readlab reports a job's threads together): the median
# IOPS and mean latency of each tool, and the paired ratio readlab / fio over the rounds with its
# 95 % interval: "equal within 10 %", "readlab higher/lower", or too close to call (the device's
# own speed can swing 2x from second to second, so only paired rounds tell the tools apart).
# Latency is total latency on both sides (fio's lat, readlab's only one, from submission); a
# rated job's (rate_iops) latencies differ in meaning: readlab's
# counts from each request's due time.
#
# The bare loop: a third run in every round for each job it can express (one file, uniform random
# reads, no mix, rate, think time or loops), printed as a row of its own: readlab's IOPS against
# the least a program can do per read. psync/pvsync2/sync and libaio jobs run benches/bare.c
# (pread at depth 1, or io_submit/io_getevents at the job's depth; built with cc into the scratch
# directory), io_uring jobs fio's t/io_uring when TIO names it. On a VM whose idle vCPUs halt (no
# guest halt polling) the device's speed depends on how often each side sleeps: with the loop
# device's kworker on one CPU and the reader on the other, the bare libaio loop read 0.82
# (0.78–0.87) of fio's IOPS at depth 16, as readlab did (0.82, 0.75–0.91), and 0.5 µs of spinning
# per read lifted it to 0.91 (10 paired rounds): fio's extra work per read keeps it awake. When
# readlab agrees with the bare loop and both sit below fio, the gap is the machine's, not a cost
# of readlab's.
#
# Settings (environment):
#   TARGET2   a job's second file (files.fio): a quarter-size loop device beside TARGET's, else
#             readlab-bench2.dat (64 MiB) under ${TMPDIR:-/tmp}.
#   TARGET    the file read. Default: a loop device over /dev/shm with direct I/O when root and
#             losetup work (steady), else readlab-bench.dat under ${TMPDIR:-/tmp}; prepared with
#             `readlab prepare --size $SIZE`.
#   SIZE      size of the prepared target            (default 256M)
#   RUNTIME   runtime= of every job                  (default 2s)
#   ROUNDS    rounds per job file                    (default 8)
#   READLAB   readlab binary (default target/release/readlab, built with cargo if missing)
#   TIO       fio's t/io_uring binary (make t/io_uring in fio's source): the bare loop of
#             io_uring jobs (above)
#   PIN       where the reads run: cross (default when root can set the kernel's unbound
#             workqueue CPU mask and there are 2+ CPUs), same, or none. A loop device's reads are
#             served by an unbound kworker that runs on any CPU, and whether it shares the
#             reader's CPU decides a depth-1 read's cost more than any tool does: on our 2-vCPU VM,
#             fio, readlab and t/io_uring all read ~10,000 IOPS at depth 1 with the kworker on the
#             other CPU and ~160,000 with it on the reader's; unpinned, each run draws its own mix
#             (fio 23–33k, readlab and a bare C loop 12–40k, run to run). cross: unbound
#             workqueues on CPU 0 (/sys/devices/virtual/workqueue/cpumask, put back at exit) and
#             every tool on the other CPUs (taskset); same: both on CPU 0; none: left to the
#             scheduler, as a user's run is.
set -euo pipefail
cd "$(dirname "$0")/.."
READLAB=${READLAB:-target/release/readlab}
[ -x "$READLAB" ] || cargo build --release >&2
SIZE=${SIZE:-256M}
RUNTIME=${RUNTIME:-2s}
ROUNDS=${ROUNDS:-8}
work=$(mktemp -d)
loop=""
loop2=""
wq_mask=/sys/devices/virtual/workqueue/cpumask
wq_saved=""
cleanup() {
    [ -n "$wq_saved" ] && echo "$wq_saved" > "$wq_mask" || true
    [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
    [ -n "$loop2" ] && losetup -d "$loop2" 2>/dev/null || true
    rm -rf "$work" /dev/shm/readlab-vs-fio-jobs.img /dev/shm/readlab-vs-fio-jobs2.img
}
trap cleanup EXIT
cpus=$(nproc)
if [ -z "${PIN:-}" ]; then
    PIN=none
    [ "$(id -u)" = 0 ] && [ -w "$wq_mask" ] && [ "$cpus" -ge 2 ] && PIN=cross
fi
pin=()
case "$PIN" in
    none) ;;
    cross | same)
        wq_saved=$(cat "$wq_mask")
        echo 1 > "$wq_mask" || { echo "PIN=$PIN: cannot write $wq_mask (root?)" >&2; exit 2; }
        [ "$PIN" = same ] && pin=(taskset -c 0) || pin=(taskset -c "1-$((cpus - 1))")
        ;;
    *) echo "PIN=$PIN: cross, same or none" >&2; exit 2 ;;
esac
if [ -z "${TARGET:-}" ]; then
    if [ "$(id -u)" = 0 ] && truncate -s "$SIZE" /dev/shm/readlab-vs-fio-jobs.img 2>/dev/null &&
        loop=$(losetup --find --show --direct-io=on /dev/shm/readlab-vs-fio-jobs.img 2>/dev/null); then
        TARGET=$loop
        "$READLAB" prepare --overwrite "$TARGET" >/dev/null
    else
        TARGET=${TMPDIR:-/tmp}/readlab-bench.dat
        [ -e "$TARGET" ] || "$READLAB" prepare --size "$SIZE" "$TARGET" >/dev/null
    fi
fi
# The second file of a job over two files (files.fio's TARGET2): a quarter of the size, beside
# the first and made the same way.
if [ -z "${TARGET2:-}" ]; then
    if [ -n "$loop" ] && truncate -s "$(( $(blockdev --getsize64 "$loop") / 4 ))" \
        /dev/shm/readlab-vs-fio-jobs2.img 2>/dev/null &&
        loop2=$(losetup --find --show --direct-io=on /dev/shm/readlab-vs-fio-jobs2.img 2>/dev/null); then
        TARGET2=$loop2
        "$READLAB" prepare --overwrite "$TARGET2" >/dev/null
    else
        TARGET2=${TMPDIR:-/tmp}/readlab-bench2.dat
        [ -e "$TARGET2" ] || "$READLAB" prepare --size 64M "$TARGET2" >/dev/null
    fi
fi
[ -z "${TIO:-}" ] || [ -x "$TIO" ] || { echo "TIO=$TIO is not fio's t/io_uring (make t/io_uring)" >&2; exit 2; }
bare=""
if cc -O2 -pthread -o "$work/bare" benches/bare.c 2>/dev/null; then
    bare=1
else
    echo "no C compiler: no bare-loop rows" >&2
fi
# The bare loop for round $2 of job file $1: per job of readlab's result (same order), the bare
# loop's command that reads what it read (`bare …` or `tio …`), or "-" when neither can express
# it; each run for the job's runtime in whole seconds (t/io_uring one more: its first second
# starts it), its IOPS kept (t/io_uring's per-second lines).
bare_run() {
    python3 - "$1.readlab.$2.json" "$([ -n "${TIO:-}" ] && echo 1 || echo 0)" > "$1.bare.$2.args" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
tio = sys.argv[2] == "1"
base = set("target engine bs rw threads iodepth batch complete_min direct runtime ramp size "
           "offset seed verify fadvise blocks_per_request io_limit stop_when_stable rate "
           "options".split())
for x in d if isinstance(d, list) else [d]:
    c = x["config"]
    secs = max(1, math.ceil(c["runtime"]))
    if c["engine"] in ("psync", "pvsync2", "libaio"):
        eng = "psync" if c["engine"] != "libaio" else "libaio"
        cmd = f"bare {eng} {c['iodepth']} {c['bs']} {c['threads']} {secs} {c['target']}"
    elif c["engine"] == "uring" and tio:
        cmd = (f"tio -d {c['iodepth']} -s 1 -c 1 -p 0 -B 0 -F 0 -R 1 -n {c['threads']} "
               f"-b {c['bs']} -r {secs + 1} {c['target']}")
    else:
        cmd = None
    plain = (set(c) <= base and c["rw"] == "randread" and c["direct"] and not c["rate"]
             and not c["ramp"] and not c["size"] and not c["offset"] and not c["io_limit"]
             and c["blocks_per_request"] == 1 and not any(c["options"].values()))
    print(cmd if cmd and plain else "-")
PY
    local i=0 tool args
    while read -r tool args; do
        # shellcheck disable=SC2086
        case "$tool" in
            bare) "${pin[@]}" "$work/bare" $args > "$1.bare.$2.$i" < /dev/null ;;
            tio) "${pin[@]}" "$TIO" $args < /dev/null 2>&1 |
                sed -n 's/^IOPS=\([0-9.K]*\),.*/\1/p' > "$1.bare.$2.$i" ;;
            *) echo - > "$1.bare.$2.$i" ;;
        esac
        i=$((i + 1))
    done < "$1.bare.$2.args"
}
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(tests/fixtures/fio-corpus/*.fio)
echo "target $TARGET, runtime $RUNTIME, $ROUNDS rounds per job file, PIN=$PIN" >&2
for job in "${jobs[@]}"; do
    name=$(basename "$job" .fio)
    sed -e "s|TARGET2|$TARGET2|g" -e "s|TARGET|$TARGET|g" -e "s|^runtime=.*|runtime=$RUNTIME|" \
        "$job" > "$work/$name.fio"
    # fio's latency_target turns a job into a search for the deepest queue that meets the target
    # (its IOPS then come from depths 1, 2, …): another experiment. readlab runs the iodepth given
    # and says so in a note; fio is held to the same by running its copy without those lines.
    grep -v '^latency_\(target\|window\|percentile\|run\)=' "$work/$name.fio" > "$work/$name.fio.fio"
    if ! cmp -s "$work/$name.fio" "$work/$name.fio.fio"; then
        echo "$name: fio runs it without latency_target/window/percentile/run (a depth search)" >&2
    fi
    for r in $(seq "$ROUNDS"); do
        fio_run() {
            (cd "$work" && "${pin[@]}" fio --output-format=json "$name.fio.fio" > "$work/$name.fio.$r.out" 2>/dev/null)
        }
        readlab_run() {
            "${pin[@]}" "$READLAB" run --job "$work/$name.fio" -q --output json --budget 0 \
                > "$work/$name.readlab.$r.json" 2>/dev/null
        }
        if [ $((r % 2)) = 1 ]; then fio_run; readlab_run; else readlab_run; fio_run; fi
        [ -z "$bare" ] || bare_run "$work/$name" "$r"
    done
done
python3 - "$work" "$ROUNDS" "${jobs[@]}" <<'EOF'
import json, os, statistics as st, sys
work, rounds, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def fio_doc(path):
    text = open(path).read()
    return json.loads(text[text.find("\n{") + 1 if text.find("\n{") >= 0 else 0:])

def fio_jobs(doc):
    """Per job name, in order: IOPS summed over clones, mean latency weighted by I/Os (µs)."""
    out = {}
    for j in doc["jobs"]:
        r = j["read"]
        n = r["total_ios"]
        a = out.setdefault(j["jobname"], [0.0, 0.0, 0])
        a[0] += r["iops"]
        a[1] += r["lat_ns"]["mean"] * n
        a[2] += n
    return [(k, v[0], v[1] / max(v[2], 1) / 1000) for k, v in out.items()]

def readlab_jobs(path):
    d = json.load(open(path))
    d = d if isinstance(d, list) else [d]
    return [(x["result"]["label"], x["result"]["iops"], x["result"]["latency"]["mean_ns"] / 1000) for x in d]

# Paired rounds: round r of fio and round r of readlab ran back to back, so their ratio carries
# the machine's drift once, not twice. Per job: the geometric mean of the per-round IOPS ratios
# (readlab / fio) with its 95 % t interval, called "equal within 10 %" when the whole interval
# lies in 0.90–1.10, "readlab higher/lower" when it excludes 1, else too close to call (more
# ROUNDS settle it). Mean latency and the bare loop's IOPS likewise.
import math
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}

def t95(df):
    return T95.get(df) or T95[max(k for k in T95 if k <= df)]

def paired(ours, theirs):
    d = [math.log(a / b) for a, b in zip(ours, theirs) if a > 0 and b > 0]
    m = st.mean(d)
    if len(d) < 2:
        return math.exp(m), None, None
    h = t95(len(d) - 1) * st.stdev(d) / math.sqrt(len(d))
    return math.exp(m), math.exp(m - h), math.exp(m + h)

def call(ratio, lo, hi):
    if lo is None:
        return "one round: no interval"
    if 0.90 <= lo and hi <= 1.10:
        return "equal within 10 %"
    if hi < 1:
        return f"readlab lower ({(1 - ratio) * 100:.0f} %)"
    if lo > 1:
        return f"readlab higher ({(ratio - 1) * 100:.0f} %)"
    return "too close: more ROUNDS"

def bare_iops(path):
    """The bare loop's IOPS for one job of one round (mean of its per-second lines), or None."""
    try:
        lines = open(path).read().split()
    except FileNotFoundError:
        return None
    # t/io_uring writes 122.99K past 100,000.
    vals = [float(v[:-1]) * 1000 if v.endswith("K") else float(v) for v in lines if v != "-"]
    return st.mean(vals) if vals else None

def row(job, what, ref, ours, fmt):
    ratio, lo, hi = paired(ours, ref)
    def r2(v):
        return f"{v:.2f}" if v < 10 else ">10"
    span = f"({r2(lo)}–{r2(hi)})" if lo is not None else ""
    print(f"{job[:19]:<19} {what:<9} {fmt(st.median(ref)):>8} {fmt(st.median(ours)):>8}  "
          f"{ratio:>4.2f} {span:<12}  {call(ratio, lo, hi)}")

# One row per figure and job (fits 100 columns): the reference's median, readlab's, the paired
# ratio readlab / reference with its 95 % interval, and the verdict. The reference is fio, or on
# a "bare IOPS" row the bare loop (TIO).
print(f"{'job':<19} {'figure':<9} {'ref':>8} {'readlab':>8}  {'ratio (95 %)':<17}  "
      f"verdict ({rounds} paired rounds)")
for job in jobs:
    name = os.path.basename(job)[:-4]
    f = [fio_jobs(fio_doc(f"{work}/{name}.fio.{r}.out")) for r in range(1, rounds + 1)]
    g = [readlab_jobs(f"{work}/{name}.readlab.{r}.json") for r in range(1, rounds + 1)]
    for i in range(len(f[0])):
        fi = [x[i][1] for x in f]; gi = [x[i][1] for x in g]
        fl = [x[i][2] for x in f]; gl = [x[i][2] for x in g]
        label = f"{name}/{f[0][i][0]}"
        row(label, "IOPS", fi, gi, lambda v: f"{v:.0f}")
        row("", "lat µs", fl, gl, lambda v: f"{v:.1f}")
        t = [bare_iops(f"{work}/{name}.bare.{r}.{i}") for r in range(1, rounds + 1)]
        if all(v is not None for v in t):
            row("", "bare IOPS", t, gi, lambda v: f"{v:.0f}")
EOF
