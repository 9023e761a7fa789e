#!/usr/bin/env bash
# vs_fio.sh — parity benchmark: readlab against fio on the same workloads and the same targets.
#
# A benchmark, not a test: it prints numbers and ratios, it never fails on them.
# (benches/vs_fio_psync.sh is the single-workload version with a per-round table; this one covers
# a matrix of targets × engines and prints one summary row per cell.)
#
# Usage:
#   benches/vs_fio.sh
#   TARGETS="c" WORKLOADS="uring uring-fixed" ROUNDS=5 benches/vs_fio.sh
#
# For every selected (target, workload) cell it runs, interleaved A B A B … for ROUNDS rounds
# (A = readlab, B = fio), random 4 KiB reads ($BS), one thread ($NUMJOBS), RUNTIME measured after
# RAMP of warm-up on both sides, readlab with a fresh random --seed each round:
#   readlab run --engine E [--iodepth N] [engine flags] --rw randread --bs $BS --numjobs $NUMJOBS
#               --runtime $RUNTIME --ramp $RAMP --direct|--buffered --seed <random>
#               --output json -q TARGET
#   fio --name=x --ioengine=E --iodepth=N [engine flags] --rw=randread --bs=$BS --numjobs=$NUMJOBS
#       --direct=1 | --direct=0 --invalidate=0 --time_based --runtime=$RUNTIME --ramp_time=$RAMP
#       --randrepeat=0 --norandommap --lat_percentiles=1 --group_reporting
#       --filename=TARGET --output-format=json --output=FILE          (fio's stdout is never parsed)
#
# Workloads (WORKLOADS, space separated; default all):
#   psync        readlab --engine psync --iodepth 1       fio --ioengine=psync --iodepth=1
#   libaio       readlab --engine libaio --iodepth 32     fio --ioengine=libaio --iodepth=32
#   uring        readlab --engine uring --iodepth 32      fio --ioengine=io_uring --iodepth=32
#   uring-fixed  readlab --engine uring --iodepth 32 --fixed-files --fixed-bufs
#                fio --ioengine=io_uring --iodepth=32 --registerfiles=1 --fixedbufs=1
#   (QD is $QD for the three queued ones; default 32.)
#
# Targets (TARGETS, space separated; default "a b c"):
#   a  loop device with direct I/O over a $SIZE file in /dev/shm (losetup --direct-io=on), read
#      with O_DIRECT by both. Needs root. The block layer without a real device behind it.
#   b  a $SIZE file on the disk filesystem under $DISK_DIR (default ${TMPDIR:-/tmp}), O_DIRECT.
#   c  a $SIZE file in /dev/shm read through the page cache (readlab --buffered, fio --direct=0
#      --invalidate=0): every read is a memory copy, so what is left is each tool's own cost per
#      I/O. Note: buffered libaio is synchronous (io_submit does the copy), it is run anyway.
#   Files are written with `readlab prepare --size $SIZE`; the loop device and every file are
#   detached/removed at exit (also on Ctrl-C).
#
# Other settings (environment):
#   ROUNDS    A B rounds per cell                      (default 3)
#   RUNTIME   measured time per run, fio syntax        (default 5s)
#   RAMP      warm-up per run, excluded by both        (default 1s)
#   BS        block size                               (default 4k)
#   QD        queue depth of libaio/uring workloads    (default 32)
#   NUMJOBS   threads (readlab) / processes (fio)      (default 1)
#   SIZE      size of every target file                (default 1G)
#   SHM_DIR   where the /dev/shm files go              (default /dev/shm)
#   DISK_DIR  where target b's file goes               (default ${TMPDIR:-/tmp})
#   READLAB   readlab binary (default target/release/readlab, built with cargo if missing)
#   FIO       fio binary                               (default fio)
#   TIO       fio's t/io_uring binary: adds the bare loop to every cell (below) and, with target a,
#             readlab against t/io_uring at its best settings, interleaved
#   TIO_ARGS  t/io_uring's settings  (default "-d 128 -s 32 -c 32 -p 0 -B 1 -F 1 -n 1"; -b and -r
#             come from BS and RAMP + RUNTIME)
#   TIO_RL    readlab's matching settings (default "--engine uring --iodepth 128 --batch 32
#             --complete-min 32 --fixed-files --fixed-bufs")
#   PIN       a CPU list (taskset -c syntax): both tools run pinned to it, every thread; takes the
#             scheduler's choice of CPU per wake-up out of the comparison (default: not pinned)
#   KEEP=1    keep the raw JSON of every run (directory printed at the end)
#   QUIET=1   do not print the per-round lines and commands, only the final tables
#
# Output (every line at most 100 columns wide, the echoed commands aside): while running, two
# lines per round (both tools' IOPS, p50, p99, depths and the IOPS ratio); at the end
#   1. the parity table, one row per (target, workload):
#        readlab IOPS, fio IOPS (medians over rounds), IOPS ratio readlab/fio, CPU per I/O ratio
#        readlab/fio (every thread of each tool's processes, see below), p50 and p99 ratios
#        readlab/fio (of the median percentiles), and the noise of fio's own rounds as min/max
#        for IOPS, p50, p99 (1.000 = identical rounds) — the floor every ratio is read against;
#      and each tool's achieved queue depth (readlab's measured mean in-flight count per thread, fio's
#      by Little's law: IOPS × mean latency ÷ jobs), to hold against QD;
#   2. the details, in three tables: absolute latencies in µs with readlab's own noise; CPU µs per
#      I/O of each tool (measured alike, and as each tool reports it); the per-round IOPS and CPU/IO
#      ratios;
#   3. the breakdown of readlab's own CPU per I/O for each cell (benches/breakdown.rs: each part
#      of its loop — clock reads, latency histogram, per-second timeline, depth accounting, random
#      offsets, engine calls, completion counter, observer ticks — timed alone on the library's
#      own types with the thread CPU clock and weighted by how often a run of the cell's shape does
#      it), the sum against the run's CPU per I/O, and what --verify would add.
#   The CPU/IO ratio is marked "*" above 0.9, the goal of issue 24.
#   A latency ratio is marked "~" when it lies inside fio's own spread for that percentile (widened
#   to fio's histogram resolution, 1/64 ≈ 1.6 %, since fio reports percentiles by bucket), "+" when
#   readlab is higher (slower) beyond that, "-" when lower. An IOPS ratio is marked "!" when it is
#   below 1.0 by more than fio's own IOPS spread.
# Latency is total latency on both sides (readlab's only latency; fio's `lat`, with
# --lat_percentiles=1), not fio's `clat`.
# CPU per I/O, the ratio's figure, is measured the same way for both tools, by neither tool:
# benches/tree_cpu.py runs the tool and reads /proc for every thread of its process tree over one
# window (from ramp + 0.3 s to 0.2 s before ramp + runtime ends, when both are reading): fio's
# main process, its helper threads and job process; readlab's main and worker threads; and on both
# sides io_uring's io-wq / SQPOLL kernel threads, which belong to the process (buffered io_uring
# reads on tmpfs are punted to io-wq, so that part is large on target c). I/Os in the window =
# the tool's IOPS × the window. The detail table also shows each tool's own report: fio's job
# thread from its usr/sys percentages × job runtime (RUSAGE_THREAD, which leaves out its other
# threads and io-wq), readlab's own threads and its io-wq / SQPOLL share apart.
#
# The bare loop (with TIO): a third run in every round (A B C), fio's t/io_uring doing the cell's
# reads and nothing else — no clock reads, no histograms, one thread: -S 1 (preadv2) for psync,
# -a 1 (libaio) for libaio, io_uring with -B 0 -F 0 or -B 1 -F 1 for the uring workloads, at the
# cell's depth with submit and complete batches of 1 (fio's defaults), -O 0 on target c (see
# tio_engine in benches/workloads.sh). Its CPU per I/O is measured like the other two (tree_cpu.py,
# the same window; its I/Os = the mean of its per-second IOPS lines after the ramp × the window).
# A fourth run (D) is the same loop timing each read (-t 1): a clock read when a read is issued and
# one when its completion is reaped, the difference into a log-linear histogram (fio's own, 64
# buckets per power of two), which is the least a tool that measures every read's latency does
# (fio and readlab both do, and the goal keeps every measurement readlab makes).
# They are the floor a tool can reach reading this way on this machine: where the timed loop
# spends more than 0.9 of fio's CPU per I/O, no tool that times each read can meet the goal there,
# and the table says "cannot"; where it spends less, the distance from readlab to it is what is
# left to cut. RAMP and RUNTIME must then be whole seconds (t/io_uring's -r).
#
# readlab against t/io_uring (with TIO, target a): ROUNDS rounds, each a pair run back to back (A B,
# then B A). The summary gives both tools' medians and their ratio, and the pairs: in how many
# readlab was ahead, the median of the per-round ratios, and the two-sided sign test's p (how likely
# a split at least this uneven is when neither tool is faster). A pair does not carry the machine's
# drift from round to round, which each tool's median does. The verdict reads the pairs first:
# open when readlab is behind in more pairs than chance explains (p < 0.05), met when it is ahead
# in more; when the pairs do not tell the two tools apart (p >= 0.05), "met by the medians" at a
# ratio >= 1.0 and "open by the medians" below it, each saying the pairs do not tell them apart.
#
# REPORT="DIR [DIR...]" re-prints the final tables from directories kept with KEEP=1 (runs nothing):
# with several, each cell's rounds (and the t/io_uring rounds) are pooled from all of them, so runs
# of the same cells on the same machine add up to one table.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
source "$here/workloads.sh"

TARGETS="${TARGETS:-a b c}"
WORKLOADS="${WORKLOADS:-$WORKLOAD_NAMES}"
ROUNDS="${ROUNDS:-3}"
RUNTIME="${RUNTIME:-5s}"
RAMP="${RAMP:-1s}"
BS="${BS:-4k}"
QD="${QD:-32}"
NUMJOBS="${NUMJOBS:-1}"
SIZE="${SIZE:-1G}"
SHM_DIR="${SHM_DIR:-/dev/shm}"
DISK_DIR="${DISK_DIR:-${TMPDIR:-/tmp}}"
READLAB="${READLAB:-$root/target/release/readlab}"
FIO="${FIO:-fio}"
KEEP="${KEEP:-0}"
QUIET="${QUIET:-0}"
TIO_ARGS_DEFAULT="-d 128 -s 32 -c 32 -p 0 -B 1 -F 1 -n 1"
TIO_RL_DEFAULT="--engine uring --iodepth 128 --batch 32 --complete-min 32 --fixed-files --fixed-bufs"
TIO_ARGS="${TIO_ARGS:-$TIO_ARGS_DEFAULT}"
TIO_RL="${TIO_RL:-$TIO_RL_DEFAULT}"
pool=() # REPORT's directories

die() { echo "vs_fio.sh: $*" >&2; exit 2; }
secs_f() { local v="${1%s}"; echo "$v"; }  # fio's "5s" (or "5", "2.5s") as seconds
secs() { local v; v="$(secs_f "$1")"; echo "${v%.*}"; }  # whole seconds
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer"
[[ "$QD" =~ ^[1-9][0-9]*$ ]] || die "QD must be a positive integer"
[[ "$RUNTIME" =~ ^[0-9]+(\.[0-9]+)?s?$ && "$RAMP" =~ ^[0-9]+(\.[0-9]+)?s?$ ]] ||
    die "RUNTIME and RAMP are seconds here (5s, 1s), for the CPU window"
python3 -c "import sys; sys.exit(0 if float('$(secs_f "$RUNTIME")') > 0.6 else 1)" ||
    die "RUNTIME must be more than 0.6s: the CPU window leaves 0.5s of it out"
if [[ -n "${TIO:-}" ]]; then
    [[ -x "$TIO" ]] || die "TIO=$TIO is not an executable (fio's t/io_uring: make t/io_uring in fio's source)"
    [[ "$RUNTIME" =~ ^[0-9]+s?$ && "$RAMP" =~ ^[0-9]+s?$ ]] ||
        die "with TIO, RUNTIME and RAMP must be whole seconds (t/io_uring's -r)"
fi
for t in $TARGETS; do [[ "$t" =~ ^[abc]$ ]] || die "unknown target '$t' (a, b, c)"; done
for w in $WORKLOADS; do is_workload "$w" || die "unknown workload '$w' ($WORKLOAD_NAMES)"; done
[[ -n "${TARGETS// /}" && -n "${WORKLOADS// /}" ]] || die "nothing selected"
command -v python3 >/dev/null || die "python3 is needed to read the JSON"
command -v "$FIO" >/dev/null || die "fio not found (apt-get install -y fio)"

if [[ ! -x "$READLAB" ]]; then
    echo "building readlab (release) ..." >&2
    (cd "$root" && cargo build --release --quiet)
fi

# ---- scratch space and cleanup -------------------------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/readlab-vs-fio.XXXXXX")"
shm_dir="" disk_dir="" loopdev=""
cleanup() {
    set +e
    if [[ -n "$loopdev" ]]; then losetup -d "$loopdev" || echo "warning: could not detach $loopdev" >&2; fi
    [[ -n "$shm_dir" ]] && rm -rf -- "$shm_dir"
    [[ -n "$disk_dir" ]] && rm -rf -- "$disk_dir"
    if [[ -n "${REPORT:-}" ]]; then :; elif [[ "$KEEP" == 1 ]]; then echo "raw JSON kept in $work" >&2; else rm -rf -- "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

prepare_file() { # path
    "$READLAB" prepare "$1" --size "$SIZE" >&2
    sync -f -- "$1" 2>/dev/null || sync
}

# ---- targets: path, and the O_DIRECT / buffered switches of each tool -------------------------
declare -A tpath tdesc
setup_target() { # a|b|c
    case "$1" in
        a)
            [[ $EUID -eq 0 ]] || die "target a needs root (losetup)"
            [[ -n "$shm_dir" ]] || shm_dir="$(mktemp -d "$SHM_DIR/readlab-vs-fio.XXXXXX")"
            prepare_file "$shm_dir/loop-backing.dat"
            loopdev="$(losetup --find --show --direct-io=on "$shm_dir/loop-backing.dat")"
            local dio; dio="$(cat "/sys/block/${loopdev#/dev/}/loop/dio" 2>/dev/null || echo '?')"
            tpath[a]="$loopdev"
            tdesc[a]="$loopdev (loop, dio=$dio) over $shm_dir/loop-backing.dat, O_DIRECT"
            ;;
        b)
            disk_dir="$(mktemp -d "$DISK_DIR/readlab-vs-fio.XXXXXX")"
            prepare_file "$disk_dir/disk.dat"
            tpath[b]="$disk_dir/disk.dat"
            local fs dev
            fs="$(df --output=fstype -- "$disk_dir" | tail -n 1)"
            dev="$(df --output=source -- "$disk_dir" | tail -n 1)"
            [[ "$fs" == tmpfs ]] && echo "warning: DISK_DIR is on tmpfs; target b measures memory" >&2
            tdesc[b]="${tpath[b]} ($fs on $dev), O_DIRECT"
            ;;
        c)
            [[ -n "$shm_dir" ]] || shm_dir="$(mktemp -d "$SHM_DIR/readlab-vs-fio.XXXXXX")"
            prepare_file "$shm_dir/buffered.dat"
            tpath[c]="$shm_dir/buffered.dat"
            local fs; fs="$(df --output=fstype -- "$shm_dir" | tail -n 1)"
            [[ "$fs" == tmpfs ]] || cat -- "${tpath[c]}" >/dev/null # into the page cache
            tdesc[c]="${tpath[c]} ($fs), buffered (page cache)"
            ;;
    esac
}
rl_mode() { [[ "$1" == c ]] && echo --buffered || echo --direct; }
fio_mode() { [[ "$1" == c ]] && echo "--direct=0 --invalidate=0" || echo "--direct=1"; }

# Build each tool's command line into an array (no word splitting of paths).
rl_cmd() { # target workload -> array RL (seed, output and target appended by the caller)
    local eng; read -r -a eng <<<"$(rl_engine "$2")"
    RL=("$READLAB" run "${eng[@]}" --rw randread --bs "$BS" --numjobs "$NUMJOBS"
        --runtime "$RUNTIME" --ramp "$RAMP" "$(rl_mode "$1")")
}
fio_cmd() { # target workload out -> array FIOC
    local eng mode; read -r -a eng <<<"$(fio_engine "$2")"; read -r -a mode <<<"$(fio_mode "$1")"
    FIOC=("$FIO" --name=x "${eng[@]}" --rw=randread --bs="$BS" --numjobs="$NUMJOBS" "${mode[@]}"
        --time_based --runtime="$RUNTIME" --ramp_time="$RAMP" --randrepeat=0 --norandommap
        --lat_percentiles=1 --group_reporting --filename="${tpath[$1]}" --output-format=json
        --output="$3")
}
# t/io_uring prints one IOPS line per second and none for its last second: it runs one second more
# than ramp + runtime, and the lines after the first RAMP seconds are the measured ones.
tio_secs() { echo $(($(secs "$RAMP") + $(secs "$RUNTIME") + 1)); }
tio_cmd() { # target workload -> arrays TIOC: the cell's reads by t/io_uring, nothing else (the bare
    # loop), and TIOT: the same timing each read (-t 1)
    local eng; read -r -a eng <<<"$(tio_engine "$2")"
    TIOC=("$TIO" "${eng[@]}" -p 0 -R 1 -n "$NUMJOBS" -b "$(numfmt --from=iec "${BS^^}")"
        -O "$([[ "$1" == c ]] && echo 0 || echo 1)" -r "$(tio_secs)")
    TIOT=("${TIOC[@]}" -t 1 "${tpath[$1]}")
    TIOC+=("${tpath[$1]}")
}

# ---- report ----------------------------------------------------------------------------------
# report round T W R   -> one line for that round
# report summary       -> the final tables (cells listed in $work/cells, in run order)
# report tio-round R   -> one line of readlab against t/io_uring on target a
# report tio-summary   -> their medians
report() {
    NUMJOBS="$NUMJOBS" RAMP_S="$(secs "$RAMP")" POOL="${pool[*]}" \
        TIO_DEFAULTS="$TIO_ARGS_DEFAULT|$TIO_RL_DEFAULT" python3 - "$work" "$ROUNDS" "$@" <<'PY'
import json, math, os, re, statistics, sys, textwrap

work, rounds, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
# The directories whose rounds the tables pool: this run's, or those REPORT names.
dirs = os.environ.get("POOL", "").split() or [work]
FIO_RES = 1.0 / 64  # fio's latency histogram: 64 buckets per power of two
GOAL_CPU = 0.9      # readlab's CPU per I/O at most 0.9x fio's (issue 24)
NUMJOBS = int(os.environ.get("NUMJOBS", "1"))

def load(path):
    text = open(path).read()
    return json.loads(text[text.index("{"):])  # tolerate anything printed before the JSON

def tree_doc(path):
    """What benches/tree_cpu.py measured of one run, or None: a directory kept before the instrument
    existed, or a run that ended before its window did."""
    try:
        c = json.load(open(path))
    except (OSError, ValueError):
        return None
    return c if c.get("cpu_s") and c.get("window_s") else None

def tree(path, iops):
    """CPU µs per I/O of a tool's whole process tree in the measuring window."""
    c = tree_doc(path)
    return c["cpu_s"] * 1e6 / (iops * c["window_s"]) if c and iops else None

def cores(path):
    """(CPUs a tool's process tree kept busy, the machine's figures) over its window, or None for a
    run measured before tree_cpu.py kept the machine's figures."""
    c = tree_doc(path)
    return (c["cpu_s"] / c["window_s"], c["machine"]) if c and c.get("machine") else None

def cell_rounds(t, w):
    """Every round of cell t/w, as (directory, round), in each directory the rounds 1, 2, ... whose
    readlab and fio documents are both there."""
    out = []
    for d in dirs:
        r = 1
        while all(os.path.exists(os.path.join(d, f"{t}.{w}.{k}.{r}.json")) for k in ("readlab", "fio")):
            out.append((d, r))
            r += 1
    return out

def readlab(t, w, rd):
    d_, r = rd
    doc = load(os.path.join(d_, f"{t}.{w}.readlab.{r}.json"))
    d = doc["result"]
    lat = d["latency"]
    notes = list(d.get("warnings") or [])
    if (d.get("errors") or {}).get("count"):
        notes.append(f"{d['errors']['count']} errors")
    cpu = d.get("cpu") or {}
    per_io = lambda *keys: (sum((cpu.get(k) or {}).get("total_s", 0.0) for k in keys) * 1e6 / d["ios"]
                            if cpu and d.get("ios") else None)
    # app: readlab's own threads (comparable to fio's job-thread rusage); wq: io-wq + SQPOLL threads
    # Achieved depth: readlab measures it (time-weighted requests in flight per thread); binaries
    # from before it did are given Little's law like fio.
    threads = doc["config"].get("threads", 1) or 1
    depth = d.get("achieved_depth")
    if depth is None:
        depth = d.get("requests_per_s", d["iops"]) * lat["mean_ns"] / 1e9 / threads
    return dict(iops=d["iops"], p50=lat["p50_ns"], p99=lat["p99_ns"], mean=lat["mean_ns"],
                cpu=per_io("app"), wq=per_io("io_worker", "sqpoll"), depth=depth, notes=notes,
                all=tree(os.path.join(d_, f"{t}.{w}.readlab.{r}.cpu"), d["iops"]),
                usr=((cpu.get("app") or {}).get("user_s", 0.0) * 1e6 / d["ios"]) if cpu and d.get("ios") else None)

def fio(t, w, rd):
    d_, r = rd
    job = load(os.path.join(d_, f"{t}.{w}.fio.{r}.json"))["jobs"][0]
    rd = job["read"]
    lat = rd["lat_ns"]
    pct = lat.get("percentile") or {}
    def p(q):
        for k, v in pct.items():
            if abs(float(k) - q) < 1e-6:
                return v
        return float("nan")
    ios = rd.get("total_ios", 0)
    rt_s = job.get("job_runtime", rd.get("runtime", 0)) / 1000.0
    cpu = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * rt_s * 1e6 / ios if ios else float("nan")
    usr = job["usr_cpu"] / 100.0 * rt_s * 1e6 / ios if ios else float("nan")
    notes = [f"fio error {job['error']}"] if job.get("error") else []
    # fio's achieved depth by Little's law: IOPS × mean total latency, per job.
    depth = rd["iops"] * lat["mean"] / 1e9 / NUMJOBS
    return dict(iops=rd["iops"], p50=p(50), p99=p(99), mean=lat["mean"], cpu=cpu, usr=usr, depth=depth,
                notes=notes, all=tree(os.path.join(d_, f"{t}.{w}.fio.{r}.cpu"), rd["iops"]))

def tio_iops(path):
    """t/io_uring's IOPS: the mean of its per-second lines after the first RAMP_S (the ramp), None
    without any. Raises OSError when it did not run."""
    unit = {"": 1, "K": 1e3, "M": 1e6}
    per_s = [float(m.group(1)) * unit[m.group(2)]
             for m in re.finditer(r"^IOPS=([0-9.]+)([KM]?),", open(path).read(), re.M)]
    ramp = int(os.environ.get("RAMP_S", "1"))
    return statistics.mean(per_s[ramp:]) if per_s[ramp:] else None

def bare(t, w, rd, kind):
    """The bare loop's round (t/io_uring doing the cell's reads; kind "tbare": timing each one), or
    None when it was not run."""
    d, r = rd
    try:
        iops = tio_iops(os.path.join(d, f"{t}.{w}.{kind}.{r}.txt"))
    except OSError:
        return None
    return dict(iops=iops, all=tree(os.path.join(d, f"{t}.{w}.{kind}.{r}.cpu"), iops) if iops else None)

def bare_rounds(t, w, rds, kind):
    """The rounds (of rds) of one kind of bare loop that ran and have their CPU measured."""
    rs = (bare(t, w, rd, kind) for rd in rds)
    return [x for x in rs if x and x["all"] is not None]

us = lambda ns: ns / 1000.0

if what == "round":
    t, w, r = sys.argv[4], sys.argv[5], int(sys.argv[6])
    a, b = readlab(t, w, (work, r)), fio(t, w, (work, r))
    # Two lines of at most 100 columns: readlab, then fio under it and the IOPS ratio.
    print(f"  {t} {w:<11} round {r}/{rounds}: readlab {a['iops']:>9,.0f} IOPS p50 {us(a['p50']):7.2f} "
          f"p99 {us(a['p99']):7.2f} us depth {a['depth']:5.2f}")
    print(f"  {'':<25}fio     {b['iops']:>9,.0f} IOPS p50 {us(b['p50']):7.2f} p99 {us(b['p99']):7.2f} us "
          f"depth {b['depth']:5.2f} ratio {a['iops'] / b['iops']:.3f}", flush=True)
    for n in a["notes"] + b["notes"]:
        print(textwrap.fill(f"note: {n}", 100, initial_indent="    ", subsequent_indent="      "))
    sys.exit(0)

def tio_round(d, r):
    """One round of readlab against t/io_uring on target a, or None when it is not in d."""
    try:
        rl = load(os.path.join(d, f"a.tio.readlab.{r}.json"))["result"]["iops"]
        tio = tio_iops(os.path.join(d, f"a.tio.{r}.txt"))
    except (OSError, ValueError, KeyError):
        return None
    return dict(rl=rl, tio=tio or float("nan"), rl_c=cores(os.path.join(d, f"a.tio.readlab.{r}.cpu")),
                tio_c=cores(os.path.join(d, f"a.tio.{r}.cpu")))

def busy_of(c):
    return f"{c[0]:.2f}, machine {c[1]['busy_cpus']:.2f} + {c[1]['steal_cpus']:.2f} stolen"

if what == "tio-round":
    x = tio_round(work, sys.argv[4])
    print(f"  round {sys.argv[4]:>2}: readlab {x['rl']:>9,.0f} IOPS, t/io_uring {x['tio']:>9,.0f} IOPS, "
          f"ratio {x['rl'] / x['tio']:.3f}")
    if x["rl_c"] and x["tio_c"]:
        print(f"    CPUs: readlab {busy_of(x['rl_c'])} | t/io_uring {busy_of(x['tio_c'])}")
    sys.exit(0)

def tio_summary(xs):
    """The medians of readlab's and t/io_uring's rounds (one setting), what kept the CPUs busy, and
    the verdict."""
    rl, tio = statistics.median(x["rl"] for x in xs), statistics.median(x["tio"] for x in xs)
    noise = min(x["tio"] for x in xs) / max(x["tio"] for x in xs)
    ratio = rl / tio
    print(textwrap.fill(f"median of {len(xs)} round(s): readlab {rl:,.0f} IOPS, t/io_uring {tio:,.0f} IOPS, "
                        f"ratio {ratio:.3f} (t/io_uring's noise, min/max: {noise:.3f})",
                        100, initial_indent="  ", subsequent_indent="    "))
    measured = [x for x in xs if x["rl_c"] and x["tio_c"]]
    why = ""
    if measured:
        m = lambda f: statistics.median(f(x) for x in measured)
        c_rl, c_tio = m(lambda x: x["rl_c"][0]), m(lambda x: x["tio_c"][0])
        busy_rl, busy_tio = m(lambda x: x["rl_c"][1]["busy_cpus"]), m(lambda x: x["tio_c"][1]["busy_cpus"])
        steal = m(lambda x: max(x["rl_c"][1]["steal_cpus"], x["tio_c"][1]["steal_cpus"]))
        ncpu = measured[0]["rl_c"][1]["cpus"]
        print(textwrap.fill(
            f"CPUs kept busy (medians of {len(measured)}, every thread of each process): readlab "
            f"{c_rl:.2f}, t/io_uring {c_tio:.2f}; the whole machine ({ncpu} CPUs) {busy_rl:.2f} busy while "
            f"readlab ran, {busy_tio:.2f} while t/io_uring did, the hypervisor taking up to {steal:.2f}",
            100, initial_indent="  ", subsequent_indent="    "))
        if max(c_rl, c_tio) < 0.9:
            why = (f"; neither tool kept a core busy (the most was {max(c_rl, c_tio):.2f}), so neither "
                   f"one's CPU bounds the rate: the reads wait on what serves them (the loop device's "
                   f"kernel worker and completions, {busy_rl - c_rl:.2f} CPUs outside readlab's process)")
    # Each round is a pair run back to back (A B, then B A): the pairs' ratios do not carry the
    # machine's drift from one round to the next, which the medians of each tool do.
    k, n, pr, p = paired(xs)
    print(textwrap.fill(f"paired rounds: readlab ahead in {k} of {n}, median of the per-round ratios "
                        f"{pr:.3f}; sign test, two-sided: p = {p:.2f}", 100, initial_indent="  ",
                        subsequent_indent="    "))
    behind = p < 0.05 and k < n - k  # behind in most pairs, beyond what chance explains
    ahead = p < 0.05 and k > n - k  # ahead in most pairs, beyond what chance explains
    if behind:
        verdict = f"open: readlab is behind in {n - k} of {n} paired rounds (p = {p:.2f})"
    elif ahead:
        verdict = f"met: readlab is ahead in {k} of {n} paired rounds (p = {p:.2f})"
        if ratio < 1.0:
            verdict += (f"; the ratio of medians below 1.0 ({ratio:.3f}) is the machine's drift "
                        f"between rounds, which the pairs do not carry")
    elif ratio >= 1.0:
        verdict = (f"met by the medians: readlab reads at least as fast; the paired rounds do not "
                   f"tell the two tools apart (readlab ahead in {k} of {n}, p = {p:.2f})")
    else:
        verdict = (f"open by the medians, but the paired rounds do not tell the two tools apart "
                   f"(readlab ahead in {k} of {n}, p = {p:.2f})")
    print(textwrap.fill(f"verdict: {verdict}{why}", 100, initial_indent="  ", subsequent_indent="    "))

def paired(xs):
    """(rounds readlab was ahead, rounds, median per-round ratio, the two-sided sign test's p for
    "neither tool is ahead more often") over the rounds both tools measured."""
    rs = [x["rl"] / x["tio"] for x in xs if x["tio"] > 0]
    ties = sum(1 for r in rs if r == 1.0)
    k, n = sum(1 for r in rs if r > 1.0), len(rs) - ties
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1)) / 2 ** n if n else 1.0
    return k, n, statistics.median(rs) if rs else float("nan"), min(1.0, 2 * tail)

def tio_settings(d):
    """(t/io_uring's settings, readlab's, kept) of the comparison kept in d: its tio.settings file, or
    the defaults with kept False for a directory kept before that file was written."""
    try:
        a, b = open(os.path.join(d, "tio.settings")).read().splitlines()[:2]
        return a, b, True
    except (OSError, ValueError):
        return (*os.environ["TIO_DEFAULTS"].split("|"), False)

if what == "tio-summary":
    groups, assumed = {}, set()  # rounds pooled only between runs of the same settings
    for d in dirs:
        r = 1
        targs, rlargs, kept = tio_settings(d)
        while (x := tio_round(d, r)) is not None:
            groups.setdefault((targs, rlargs), []).append(x)
            r += 1
        if r > 1 and not kept:
            assumed.add((targs, rlargs))
    for key, xs in groups.items():
        if sys.argv[4:] == ["header"]:
            print("\nreadlab vs t/io_uring on target a")
            print(f"  t/io_uring: {key[0]}\n  readlab:    {key[1]}")
            if key in assumed:
                print("  (some directories did not keep their settings: taken as the defaults)")
        tio_summary(xs)
    sys.exit(0)

cells = []  # in run order, each once however many directories ran it
for d in dirs:
    for cell in (line.split() for line in open(os.path.join(d, "cells"))):
        if cell and cell not in cells:
            cells.append(cell)
med = lambda xs, k: statistics.median(x[k] for x in xs)
spread = lambda xs, k: min(x[k] for x in xs) / max(x[k] for x in xs)

def cpu_key(A, B):
    """Which CPU figure the ratio uses: every thread of each tool's process tree, measured alike from
    outside (benches/tree_cpu.py); each tool's own report only for a directory kept before that."""
    return "all" if all(x["all"] is not None for x in A + B) else "cpu"

def cpu_ratio(A, B):
    k = cpu_key(A, B)
    ca = [x[k] for x in A if x[k] is not None]
    return statistics.median(ca) / med(B, k) if ca else float("nan")

rows = []
for t, w in cells:
    rds = cell_rounds(t, w)
    if not rds:
        sys.exit(f"vs_fio.sh: no round of cell {t}/{w} in {' '.join(dirs)}")
    A = [readlab(t, w, rd) for rd in rds]
    B = [fio(t, w, rd) for rd in rds]
    rows.append((t, w, A, B, bare_rounds(t, w, rds, "bare"), bare_rounds(t, w, rds, "tbare")))

def lat_mark(ratio, fio_spread):
    band = max(1.0 / fio_spread - 1.0, FIO_RES)  # fio's own max/min - 1, at least one bucket
    if ratio > 1.0 + band:
        return "+"
    if ratio < 1.0 / (1.0 + band):
        return "-"
    return "~"

if not rows:  # directories holding only the t/io_uring comparison's rounds
    sys.exit(0)
counts = sorted({len(A) for _, _, A, *_ in rows})
of = f"{counts[0]} round(s)" if len(counts) == 1 else f"{counts[0]} to {counts[-1]} rounds by cell"
print(f"parity (medians of {of}; ratios readlab/fio; noise = fio's own rounds, min/max)")
if len(dirs) > 1:
    print(textwrap.fill("rounds pooled from " + " ".join(dirs), 100, initial_indent="  ",
                        subsequent_indent="    "))
print(f"  {'':<13} {'IOPS':^19}  {'ratios readlab/fio':^31}  {'fio noise':^17}  {'depth':^11}".rstrip())
print(f"  {'t':<1} {'workload':<11} {'readlab':>9} {'fio':>9}  {'IOPS':>7} {'CPU/IO':>7} {'p50':>7} {'p99':>7}  "
      f"{'IOPS':>5} {'p50':>5} {'p99':>5}  {'rl':>5} {'fio':>5}")
for t, w, A, B, *_ in rows:
    ra, fb = med(A, "iops"), med(B, "iops")
    ir = ra / fb
    cr = cpu_ratio(A, B)
    p50r = med(A, "p50") / med(B, "p50")
    p99r = med(A, "p99") / med(B, "p99")
    si, s50, s99 = spread(B, "iops"), spread(B, "p50"), spread(B, "p99")
    imark = "!" if ir < si else " "
    cmark = "*" if cr > GOAL_CPU else " "
    print(f"  {t:<1} {w:<11} {ra:>9,.0f} {fb:>9,.0f}  {ir:>6.3f}{imark} {cr:>6.3f}{cmark} "
          f"{p50r:>6.3f}{lat_mark(p50r, s50)} {p99r:>6.3f}{lat_mark(p99r, s99)}  "
          f"{si:>5.3f} {s50:>5.3f} {s99:>5.3f}  {med(A, 'depth'):>5.2f} {med(B, 'depth'):>5.2f}")
print("  marks: IOPS '!' = below 1.0 by more than fio's own IOPS spread; CPU/IO '*' = above the goal")
print(f"  of {GOAL_CPU} (CPU per I/O of every thread of readlab's process over every thread of fio's")
print("  processes, both measured from /proc in the same window: rl all / fio all below); latency")
print("  '~' = within fio's own spread (at least 1/64, fio's bucket width), '+' = readlab slower")
print("  beyond it, '-' = faster")
print("  depth: mean requests in flight per thread (readlab: measured, time-weighted; fio: IOPS x mean")
print("  latency, Little's law); both should be close to the queue depth asked")
print()
def medopt(xs, k):
    v = [x[k] for x in xs if x[k] is not None]
    return f"{statistics.median(v):.3f}" if v else "-"
print("latency (medians, us) and readlab's own noise (its rounds, min/max: IOPS, p50, p99, CPU per")
print("I/O; fio CPU = fio's CPU per I/O over its rounds, min/max)")
print(f"  {'t':<1} {'workload':<11} {'rl p50':>8} {'fio p50':>8} {'rl p99':>8} {'fio p99':>8}  "
      f"{'IOPS':>6} {'p50':>6} {'p99':>6} {'CPU':>6} {'fio CPU':>7}")
for t, w, A, B, *_ in rows:
    k = cpu_key(A, B)
    print(f"  {t:<1} {w:<11} {us(med(A, 'p50')):>8.2f} {us(med(B, 'p50')):>8.2f} "
          f"{us(med(A, 'p99')):>8.2f} {us(med(B, 'p99')):>8.2f}  "
          f"{spread(A, 'iops'):>6.3f} {spread(A, 'p50'):>6.3f} {spread(A, 'p99'):>6.3f} {spread(A, k):>6.3f} "
          f"{spread(B, k):>7.3f}")
print()
print("CPU us per I/O (medians): rl all / fio all = every thread of the tool's processes, io-wq and")
print("SQPOLL included, from /proc over the same window (the parity table's ratio); rl own = readlab's")
print("own threads as it reports them; fio job = fio's job thread as fio reports it (its usr/sys % over")
print("the job's runtime, RUSAGE_THREAD); rl usr / fio usr = the user-space part of those two (the")
print("tool's own loop and the system-call wrappers; the rest is the kernel's work for the read);")
print("floor = fio's kernel part over its whole CPU per I/O: the CPU/IO ratio a tool spending nothing")
print("in user space would get; rl io-wq = the kernel io-wq/SQPOLL threads working for readlab, as")
print("readlab reports them")
print(f"  {'t':<1} {'workload':<11} {'rl all':>7} {'fio all':>7} {'rl own':>7} {'fio job':>7} "
      f"{'rl usr':>7} {'fio usr':>7} {'floor':>6} {'rl io-wq':>8}")
for t, w, A, B, *_ in rows:
    print(f"  {t:<1} {w:<11} {medopt(A, 'all'):>7} {medopt(B, 'all'):>7} "
          f"{medopt(A, 'cpu'):>7} {med(B, 'cpu'):>7.3f} "
          f"{medopt(A, 'usr'):>7} {med(B, 'usr'):>7.3f} {1.0 - med(B, 'usr') / med(B, 'cpu'):>6.3f} "
          f"{medopt(A, 'wq'):>8}")
print()
print("per round, readlab/fio: IOPS, and CPU per I/O (the figure of the parity table's ratio)")
for t, w, A, B, *_ in rows:
    k = cpu_key(A, B)
    ratios = [f"{a['iops'] / b['iops']:.3f}" for a, b in zip(A, B)]
    cratios = [f"{a[k] / b[k]:.3f}" if a[k] is not None else "-" for a, b in zip(A, B)]
    for what_, xs in (("IOPS", ratios), ("CPU", cratios)):
        # 13 rounds to a line of 100 columns; more go on the lines below
        for i in range(0, len(xs), 13):
            head = f"{t:<1} {w:<11} {what_:<4}" if i == 0 else ""
            print(f"  {head:<18} {' '.join(xs[i:i + 13])}")
if any(C for *_, C, _ in rows):
    print()
    print("the bare loop: fio's t/io_uring doing each cell's reads and nothing else (-S preadv2, -a libaio,")
    print("else io_uring; TIO); timed: the same loop timing each read (-t 1: a clock read at issue and at")
    print("reap, a histogram record), the least a tool that measures every read does. CPU per I/O of its")
    print("process from /proc in the same window as the others; /fio = its median over fio's; rl/timed =")
    print("readlab's median over the timed loop's; noise = the timed loop's rounds, min/max (both the bare")
    print("loop's in a directory kept before the timed loop existed, where timed is -)")
    print(f"cannot = the timed loop itself spends more than {GOAL_CPU} of fio's CPU per I/O; open = it does")
    print("not, and readlab (rl/timed of it) is still above the goal")
    print(f"  {'t':<1} {'workload':<11} {'bare IOPS':>10} {'IOPS/fio':>8} {'CPU/fio':>7} {'timed':>6} "
          f"{'rl/timed':>8} {'noise':>6}  verdict")
    for t, w, A, B, C, D in rows:
        if not C or cpu_key(A, B) != "all":
            print(f"  {t:<1} {w:<11} {'-':>10}  (no bare loop or no /proc CPU for this cell)")
            continue
        bf, rf = med(C, "all") / med(B, "all"), cpu_ratio(A, B)
        floor, fl = (D, "timed") if D else (C, "bare")  # a directory kept before the timed loop
        tf = med(floor, "all") / med(B, "all")
        rb = statistics.median(x["all"] for x in A) / med(floor, "all")
        if rf <= GOAL_CPU:
            verdict = "met"
        elif bf > GOAL_CPU:
            verdict = f"cannot: bare loop > {GOAL_CPU}"
        elif tf > GOAL_CPU:
            verdict = f"cannot: timed loop > {GOAL_CPU}"
        else:
            verdict = f"open: readlab {rb:.3f}x {fl}"
        timed = f"{tf:>6.3f}" if D else f"{'-':>6}"
        print(f"  {t:<1} {w:<11} {med(C, 'iops'):>10,.0f} {med(C, 'iops') / med(B, 'iops'):>8.3f} "
              f"{bf:>7.3f} {timed} {rb:>8.3f} {spread(floor, 'all'):>6.3f}  {verdict}")
notes = sorted({f"{t} {w}: {n}" for t, w, A, B, *_ in rows for x in A + B for n in x["notes"]})
if notes:
    print()
    print("notes from the runs:")
    for n in notes:
        print(textwrap.fill(n, 100, initial_indent="  ", subsequent_indent="    "))
PY
}

# ---- run ---------------------------------------------------------------------------------------
# Both tools' CPU from one instrument: every thread of the tool's process tree (benches/tree_cpu.py),
# from WINDOW_FROM after the start (past both tools' start-up, ~0.25 s for fio, and into the ramp)
# to WINDOW_END before the ramp + runtime is over (both tools still reading).
WINDOW_FROM=$(python3 -c "print($(secs_f "$RAMP") + 0.3)")
WINDOW_TO=$(python3 -c "print($(secs_f "$RAMP") + $(secs_f "$RUNTIME") - 0.2)")
pin=()
[[ -z "${PIN:-}" ]] || pin=(taskset -c "$PIN")
tree_cpu() { # out command... -> runs the command, the CPU of its process tree in the window to out
    local out="$1"; shift
    python3 "$here/tree_cpu.py" "$WINDOW_FROM" "$WINDOW_TO" "$out" -- "${pin[@]}" "$@"
}
if [[ -n "${REPORT:-}" ]]; then
    rm -rf -- "$work"; KEEP=1
    read -r -a pool <<<"$REPORT"
    for d in "${pool[@]}"; do [[ -f "$d/cells" ]] || die "REPORT: $d is not a directory kept with KEEP=1"; done
    work="${pool[0]}"
    report summary
    report tio-summary header
    exit 0
fi
for t in $TARGETS; do setup_target "$t"; done

echo "readlab vs fio: randread bs=$BS numjobs=$NUMJOBS qd=$QD runtime=$RUNTIME ramp=$RAMP rounds=$ROUNDS"
[[ -z "${PIN:-}" ]] || echo "both tools pinned: taskset -c $PIN"
echo "$(uname -sr); $(nproc) CPUs; $("$FIO" --version); readlab $("$READLAB" --version 2>/dev/null | awk '{print $NF}')"
for t in $TARGETS; do echo "target $t: ${tdesc[$t]}"; done
echo

: >"$work/cells"
for t in $TARGETS; do
    for w in $WORKLOADS; do
        echo "$t $w" >>"$work/cells"
        rl_cmd "$t" "$w"
        [[ -z "${TIO:-}" ]] || tio_cmd "$t" "$w"
        if [[ "$QUIET" != 1 ]]; then
            fio_cmd "$t" "$w" "$work/$t.$w.fio.R.json"
            echo "cell $t/$w"
            echo "  # ${RL[*]} --seed <random> --output json -q ${tpath[$t]}"
            echo "  # ${FIOC[*]}"
            [[ -z "${TIO:-}" ]] || echo "  # ${TIOC[*]}"$'\n'"  # ${TIOT[*]}"
        fi
        for ((r = 1; r <= ROUNDS; r++)); do
            seed=$((RANDOM * 32768 + RANDOM))
            # Its warnings are in the JSON (the notes below); what it says goes to a file, shown if it fails.
            if ! tree_cpu "$work/$t.$w.readlab.$r.cpu" "${RL[@]}" --seed "$seed" --output json -q "${tpath[$t]}" \
                >"$work/$t.$w.readlab.$r.json" 2>"$work/$t.$w.readlab.$r.err"; then
                cat -- "$work/$t.$w.readlab.$r.err" >&2
                die "readlab failed on $t/$w: ${RL[*]} --seed $seed ${tpath[$t]}"
            fi
            fio_cmd "$t" "$w" "$work/$t.$w.fio.$r.json"
            tree_cpu "$work/$t.$w.fio.$r.cpu" "${FIOC[@]}" >/dev/null
            if [[ -n "${TIO:-}" ]]; then
                tree_cpu "$work/$t.$w.bare.$r.cpu" "${TIOC[@]}" >"$work/$t.$w.bare.$r.txt" 2>&1 ||
                    echo "note: the bare loop failed on $t/$w: ${TIOC[*]} (see $work/$t.$w.bare.$r.txt)" >&2
                tree_cpu "$work/$t.$w.tbare.$r.cpu" "${TIOT[@]}" >"$work/$t.$w.tbare.$r.txt" 2>&1 ||
                    echo "note: the timed loop failed on $t/$w: ${TIOT[*]} (see $work/$t.$w.tbare.$r.txt)" >&2
            fi
            [[ "$QUIET" == 1 ]] || report round "$t" "$w" "$r"
        done
    done
done
[[ "$QUIET" == 1 ]] || echo
report summary

# ---- t/io_uring on target a (TIO=path to fio's t/io_uring) ----------------------------------------
if [[ -n "${TIO:-}" && " $TARGETS " == *" a "* ]]; then
    read -r -a targs <<<"$TIO_ARGS"
    echo
    echo "readlab vs t/io_uring on target a, $ROUNDS round(s) interleaved A B B A"
    printf '%s\n%s\n' "$TIO_ARGS" "$TIO_RL" >"$work/tio.settings"
    echo "  t/io_uring: $TIO $TIO_ARGS"
    echo "              (IOPS: the mean of its per-second lines after the first $(secs "$RAMP"))"
    echo "  readlab:    $TIO_RL"
    echo "              (IOPS of its measured window)"
    read -r -a rla <<<"$TIO_RL"
    TRL=("$READLAB" run "${rla[@]}" --rw randread --bs "$BS" --runtime "$RUNTIME" --ramp "$RAMP"
        --direct)
    for ((r = 1; r <= ROUNDS; r++)); do
        # A B, then B A: neither tool always runs first (the page cache, the loop worker's state)
        for who in $( ((r % 2)) && echo "rl tio" || echo "tio rl"); do
            if [[ $who == rl ]]; then
                # as in the cells: what readlab says goes to a file, shown if it fails
                seed=$((RANDOM * 32768 + RANDOM))
                if ! tree_cpu "$work/a.tio.readlab.$r.cpu" "${TRL[@]}" --seed "$seed" --output json -q \
                    "${tpath[a]}" >"$work/a.tio.readlab.$r.json" 2>"$work/a.tio.readlab.$r.err"; then
                    cat -- "$work/a.tio.readlab.$r.err" >&2
                    die "readlab failed against t/io_uring: ${TRL[*]} --seed $seed ${tpath[a]}"
                fi
            else
                tree_cpu "$work/a.tio.$r.cpu" "$TIO" "${targs[@]}" -b "$(numfmt --from=iec "${BS^^}")" \
                    -r "$(tio_secs)" "${tpath[a]}" >"$work/a.tio.$r.txt" 2>&1 || true
            fi
        done
        report tio-round "$r"
    done
    report tio-summary
fi

echo
echo "where readlab's own CPU per I/O goes (each part of its loop timed alone, weighted by how often"
echo "a run of the cell's shape does it: cargo bench --bench breakdown -- RUN.json; ns of CPU per I/O)"
docs=()
while read -r t w; do docs+=("$work/$t.$w.readlab.1.json"); done <"$work/cells"
(cd "$root" && cargo bench --quiet --bench breakdown -- --brief "${docs[@]}" 2>/dev/null) ||
    echo "  (the breakdown did not run: cargo bench --bench breakdown)"
