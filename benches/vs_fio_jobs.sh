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
# IOPS and mean latency of each tool, their ratio (readlab / fio), and fio's own spread from round
# to round (max/min of its IOPS) — the noise every ratio is read against. A ratio inside fio's
# spread is "within the noise". Latency is total latency on both sides (fio's lat, readlab's
# only one, from submission); a rated job's (rate_iops) latencies differ in meaning: readlab's
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
#   ROUNDS    rounds per job file                    (default 3)
#   READLAB   readlab binary (default target/release/readlab, built with cargo if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
READLAB=${READLAB:-target/release/readlab}
[ -x "$READLAB" ] || cargo build --release >&2
SIZE=${SIZE:-256M}
RUNTIME=${RUNTIME:-2s}
ROUNDS=${ROUNDS:-3}
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

print(f"{'job file':<12} {'job':<16} {'fio IOPS':>10} {'readlab':>10} {'ratio':>6} {'fio spread':>10}"
      f" {'fio lat':>9} {'readlab':>9} {'ratio':>6}  verdict")
for job in jobs:
    name = os.path.basename(job)[:-4]
    f = [fio_jobs(fio_doc(f"{work}/{name}.fio.{r}.out")) for r in range(1, rounds + 1)]
    g = [readlab_jobs(f"{work}/{name}.readlab.{r}.json") for r in range(1, rounds + 1)]
    for i in range(len(f[0])):
        fi = [x[i][1] for x in f]; gi = [x[i][1] for x in g]
        fl = [x[i][2] for x in f]; gl = [x[i][2] for x in g]
        ratio = st.median(gi) / st.median(fi)
        spread = max(fi) / min(fi)
        lat = st.median(gl) / st.median(fl)
        inside = 1 / spread <= ratio <= spread
        print(f"{name:<12} {f[0][i][0][:16]:<16} {st.median(fi):>10.0f} {st.median(gi):>10.0f} {ratio:>6.3f}"
              f" {spread:>10.3f} {st.median(fl):>8.1f}u {st.median(gl):>8.1f}u {lat:>6.3f}  "
              + ("within the noise" if inside else "apart"))
EOF
