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
cleanup() {
    [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
    [ -n "$loop2" ] && losetup -d "$loop2" 2>/dev/null || true
    rm -rf "$work" /dev/shm/readlab-vs-fio-jobs.img /dev/shm/readlab-vs-fio-jobs2.img
}
trap cleanup EXIT
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
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(tests/fixtures/fio-corpus/*.fio)
echo "target $TARGET, runtime $RUNTIME, $ROUNDS rounds per job file" >&2
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
            (cd "$work" && fio --output-format=json "$name.fio.fio" > "$work/$name.fio.$r.out" 2>/dev/null)
        }
        readlab_run() {
            "$READLAB" run --job "$work/$name.fio" -q --output json --budget 0 \
                > "$work/$name.readlab.$r.json" 2>/dev/null
        }
        if [ $((r % 2)) = 1 ]; then fio_run; readlab_run; else readlab_run; fio_run; fi
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
# ROUNDS settle it). Mean latency likewise, with its ratio only.
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
    return "too close to call: more ROUNDS"

print(f"{'job file':<9} {'job':<16} {'fio IOPS':>9} {'readlab':>9} {'ratio':>6} {'95 % interval':>13}"
      f" {'fio lat':>8} {'readlab':>8} {'ratio':>6}  verdict ({rounds} paired rounds)")
for job in jobs:
    name = os.path.basename(job)[:-4]
    f = [fio_jobs(fio_doc(f"{work}/{name}.fio.{r}.out")) for r in range(1, rounds + 1)]
    g = [readlab_jobs(f"{work}/{name}.readlab.{r}.json") for r in range(1, rounds + 1)]
    for i in range(len(f[0])):
        fi = [x[i][1] for x in f]; gi = [x[i][1] for x in g]
        fl = [x[i][2] for x in f]; gl = [x[i][2] for x in g]
        ratio, lo, hi = paired(gi, fi)
        lat, _, _ = paired(gl, fl)
        span = f"{lo:.2f}–{hi:.2f}" if lo is not None else "–"
        print(f"{name:<9} {f[0][i][0][:16]:<16} {st.median(fi):>9.0f} {st.median(gi):>9.0f} {ratio:>6.3f}"
              f" {span:>13} {st.median(fl):>7.1f}u {st.median(gl):>7.1f}u {lat:>6.3f}  "
              + call(ratio, lo, hi))
EOF
