#!/usr/bin/env bash
# vs_fio_psync.sh — compare readlab's psync engine with fio's psync engine on the same file.
#
# A benchmark, not a test: it prints numbers and ratios, it never fails on them.
#
# Usage:
#   benches/vs_fio_psync.sh [FILE]
#   MODE=buffered ROUNDS=5 RUNTIME=10s benches/vs_fio_psync.sh
#
# What it runs, interleaved A B A B … for ROUNDS rounds (A = readlab, B = fio), same file, same
# block size, same warm-up, one thread at queue depth 1, random 4 KiB reads by default:
#   readlab run --engine psync --rw randread --bs $BS --numjobs $NUMJOBS --runtime $RUNTIME
#               --ramp $RAMP [--direct|--buffered] --seed <random> --output json -q FILE
#   fio --ioengine=psync --rw=randread --bs=$BS --direct=1|0 --iodepth=1 --numjobs=$NUMJOBS
#       --time_based --runtime=$RUNTIME --ramp_time=$RAMP --randrepeat=0 --norandommap
#       --lat_percentiles=1 --group_reporting --filename=FILE --output=F --output-format=json
# Latency compared is total latency on both sides (readlab's only latency; fio's `lat`, whose
# percentiles fio reports only with --lat_percentiles=1), not fio's `clat`.
#
# Modes (MODE):
#   direct   (default) O_DIRECT on both (readlab --direct, fio --direct=1). Measures the device and
#            the kernel's block path. The default file lives on a disk filesystem under
#            ${TMPDIR:-/tmp} (O_DIRECT does not go through the page cache).
#   buffered Page-cache reads on both (readlab --buffered, fio --direct=0 --invalidate=0). The
#            default file lives in /dev/shm (tmpfs), so every read is a memory copy and what is
#            left is each tool's own per-I/O cost (syscall, clocks, bookkeeping). If you pass a file
#            elsewhere, it is read once with cat first so that it sits in the page cache, and fio's
#            default invalidate=1 (which would drop that cache) is turned off.
#
# Settings (environment; the first argument, if any, overrides FILE):
#   FILE      target file. Default: readlab-bench.dat in a fresh temp dir (see MODE), removed at exit.
#             A FILE that does not exist is created with `readlab prepare --size $SIZE` and kept.
#   MODE      direct | buffered                     (default direct)
#   RUNTIME   measured time per run, fio syntax      (default 5s)
#   RAMP      warm-up per run, excluded by both      (default 1s)
#   ROUNDS    number of A B rounds                   (default 3)
#   BS        block size                             (default 4k)
#   NUMJOBS   threads (readlab) / processes (fio)    (default 1)
#   SIZE      size given to `readlab prepare`        (default 256M)
#   READLAB   readlab binary (default target/release/readlab, built with cargo if missing)
#   FIO       fio binary                             (default fio)
#   KEEP=1    keep the raw JSON of every run (directory printed at the end)
#
# Output: a table per round (IOPS, latency p50/p99/p99.9/mean in microseconds, CPU µs per I/O),
# then a summary: median IOPS of each tool, IOPS ratio readlab/fio, p50 and p99 ratios
# readlab/fio (of the medians over rounds), and the spread (min/max) between each tool's own
# rounds, which is the noise floor any ratio should be read against.
# fio's CPU per I/O is an estimate: (usr_cpu + sys_cpu) × job runtime ÷ I/Os, from fio's own
# percentages; readlab's is the process's CPU time per measured I/O.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

MODE="${MODE:-direct}"
RUNTIME="${RUNTIME:-5s}"
RAMP="${RAMP:-1s}"
ROUNDS="${ROUNDS:-3}"
BS="${BS:-4k}"
NUMJOBS="${NUMJOBS:-1}"
SIZE="${SIZE:-256M}"
READLAB="${READLAB:-$root/target/release/readlab}"
FIO="${FIO:-fio}"
KEEP="${KEEP:-0}"
FILE="${1:-${FILE:-}}"

case "$MODE" in
    direct) rl_mode=--direct; fio_mode=(--direct=1) ;;
    buffered) rl_mode=--buffered; fio_mode=(--direct=0 --invalidate=0) ;;
    *) echo "MODE must be direct or buffered, not '$MODE'" >&2; exit 2 ;;
esac
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive integer" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON" >&2; exit 2; }
command -v "$FIO" >/dev/null || { echo "fio not found (apt-get install -y fio)" >&2; exit 2; }

if [[ ! -x "$READLAB" ]]; then
    echo "building readlab (release) ..." >&2
    (cd "$root" && cargo build --release --quiet)
fi

# Scratch space: raw JSON of every run, and the default target file.
work="$(mktemp -d "${TMPDIR:-/tmp}/readlab-vs-fio.XXXXXX")"
data_dir=""
cleanup() {
    [[ -n "$data_dir" ]] && rm -rf -- "$data_dir"
    if [[ "$KEEP" == 1 ]]; then echo "raw JSON kept in $work" >&2; else rm -rf -- "$work"; fi
}
trap cleanup EXIT

if [[ -z "$FILE" ]]; then
    if [[ "$MODE" == buffered ]]; then base=/dev/shm; else base="${TMPDIR:-/tmp}"; fi
    data_dir="$(mktemp -d "$base/readlab-bench.XXXXXX")"
    FILE="$data_dir/readlab-bench.dat"
fi
if [[ ! -e "$FILE" ]]; then
    "$READLAB" prepare "$FILE" --size "$SIZE" >&2
    sync -f -- "$FILE" 2>/dev/null || sync # let the filesystem settle before round 1 measures
    sleep 1
fi
fstype="$(df --output=fstype -- "$FILE" 2>/dev/null | tail -n 1 || echo "?")"
if [[ "$MODE" == direct && "$fstype" == tmpfs ]]; then
    echo "warning: $FILE is on tmpfs; O_DIRECT there measures memory, not a device" >&2
fi
if [[ "$MODE" == buffered && "$fstype" != tmpfs && -f "$FILE" ]]; then
    cat -- "$FILE" >/dev/null # into the page cache
fi

echo "readlab vs fio, psync randread: mode=$MODE bs=$BS numjobs=$NUMJOBS iodepth=1 runtime=$RUNTIME ramp=$RAMP rounds=$ROUNDS"
echo "file $FILE ($fstype, $(stat -L -c %s "$FILE" 2>/dev/null || echo '?') B); $(uname -sr); $(nproc) CPUs; $("$FIO" --version)"
echo

run_readlab() { # round
    "$READLAB" run --engine psync --rw randread --bs "$BS" --numjobs "$NUMJOBS" --iodepth 1 \
        --runtime "$RUNTIME" --ramp "$RAMP" "$rl_mode" --seed "$((RANDOM * 32768 + RANDOM))" \
        --output json -q "$FILE" >"$work/readlab.$1.json"
}
run_fio() { # round
    "$FIO" --name=vs-readlab --ioengine=psync --rw=randread --bs="$BS" "${fio_mode[@]}" \
        --iodepth=1 --numjobs="$NUMJOBS" --time_based --runtime="$RUNTIME" --ramp_time="$RAMP" \
        --randrepeat=0 --norandommap --lat_percentiles=1 --group_reporting \
        --filename="$FILE" --output="$work/fio.$1.json" --output-format=json >/dev/null
}

# Reads the JSON of the rounds done so far; prints one round's table, or the summary.
report() { # round|summary
    python3 - "$work" "$1" "$ROUNDS" <<'PY'
import json, os, statistics, sys

work, what, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])

def load(path):
    text = open(path).read()
    return json.loads(text[text.index("{"):])  # tolerate anything printed before the JSON

def readlab(r):
    d = load(os.path.join(work, f"readlab.{r}.json"))["result"]
    lat = d["latency"]
    return dict(iops=d["iops"], p50=lat["p50_ns"], p99=lat["p99_ns"], p999=lat["p999_ns"],
                mean=lat["mean_ns"], min=lat["min_ns"], max=lat["max_ns"],
                cpu=d.get("cpu_us_per_io"))

def fio(r):
    job = load(os.path.join(work, f"fio.{r}.json"))["jobs"][0]
    rd = job["read"]
    lat = rd["lat_ns"]
    pct = lat.get("percentile") or rd.get("clat_ns", {}).get("percentile") or {}
    def p(q):
        for k, v in pct.items():
            if abs(float(k) - q) < 1e-6:
                return v
        return float("nan")
    ios = rd.get("total_ios", 0)
    rt_s = job.get("job_runtime", rd.get("runtime", 0)) / 1000.0
    cpu = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * rt_s * 1e6 / ios if ios else float("nan")
    return dict(iops=rd["iops"], p50=p(50), p99=p(99), p999=p(99.9), mean=lat["mean"],
                min=lat["min"], max=lat["max"], cpu=cpu)

us = lambda ns: ns / 1000.0
def row(name, m):
    cpu = "-" if m["cpu"] is None else f"{m['cpu']:.2f}"
    return (f"  {name:<8} {m['iops']:>11,.0f} {us(m['p50']):>9.2f} {us(m['p99']):>9.2f} "
            f"{us(m['p999']):>9.2f} {us(m['mean']):>9.2f} {us(m['min']):>8.2f} {us(m['max']):>10.1f} {cpu:>8}")
head = (f"  {'tool':<8} {'IOPS':>11} {'p50 us':>9} {'p99 us':>9} {'p99.9 us':>9} {'mean us':>9} "
        f"{'min us':>8} {'max us':>10} {'cpu us/io':>8}")

if what != "summary":
    r = int(what)
    a, b = readlab(r), fio(r)
    print(f"round {r}/{rounds}")
    print(head)
    print(row("readlab", a))
    print(row("fio", b))
    print(f"  {'ratio':<8} {a['iops'] / b['iops']:>11.3f} {a['p50'] / b['p50']:>9.3f} "
          f"{a['p99'] / b['p99']:>9.3f} {a['p999'] / b['p999']:>9.3f} {a['mean'] / b['mean']:>9.3f}"
          "   (readlab/fio)")
    print()
    sys.exit(0)

A = [readlab(r) for r in range(1, rounds + 1)]
B = [fio(r) for r in range(1, rounds + 1)]
med = lambda xs, k: statistics.median(x[k] for x in xs)
spread = lambda xs, k: min(x[k] for x in xs) / max(x[k] for x in xs)

print(f"summary over {rounds} round(s) (medians of the rounds)")
print(f"  {'':<22} {'readlab':>12} {'fio':>12} {'readlab/fio':>12}")
for k, label, scale, fmt in (("iops", "IOPS", 1, ",.0f"), ("p50", "p50 latency us", 1e-3, ".2f"),
                             ("p99", "p99 latency us", 1e-3, ".2f"), ("p999", "p99.9 latency us", 1e-3, ".2f"),
                             ("mean", "mean latency us", 1e-3, ".2f")):
    x, y = med(A, k), med(B, k)
    print(f"  {label:<22} {x * scale:>12{fmt}} {y * scale:>12{fmt}} {x / y:>12.3f}")
cpus = [x["cpu"] for x in A if x["cpu"] is not None]
if cpus:
    x, y = statistics.median(cpus), med(B, "cpu")
    print(f"  {'CPU us per I/O':<22} {x:>12.2f} {y:>12.2f} {x / y:>12.3f}   (fio's is estimated)")
print()
print("noise: spread between a tool's own rounds (min/max; 1.000 = identical rounds)")
print(f"  {'':<22} {'readlab':>12} {'fio':>12}")
for k, label in (("iops", "IOPS"), ("p50", "p50"), ("p99", "p99")):
    print(f"  {label:<22} {spread(A, k):>12.3f} {spread(B, k):>12.3f}")
ratios = [a["iops"] / b["iops"] for a, b in zip(A, B)]
print(f"  per-round IOPS ratio readlab/fio: " + " ".join(f"{x:.3f}" for x in ratios))
PY
}

for ((r = 1; r <= ROUNDS; r++)); do
    run_readlab "$r"
    run_fio "$r"
    report "$r"
done
report summary
