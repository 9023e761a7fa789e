#!/usr/bin/env bash
# readlab serve (thread and uring models) against nbdkit's file plugin (and qemu-nbd in the sweep),
# all serving the same prepared file from /dev/shm (through the page cache, like for like),
# measured by the same clients, rounds interleaved (the order rotating every round), medians.
#
# Parts (PARTS, default "qd1 c16": the issue-21 goals, about 2 minutes; PARTS=all for all four):
#   qd1    one client, 4 KiB random reads, one request in flight, through readlab's client
#          (--engine nbd) and fio's nbd engine (libnbd): p50 and p99 (fio: total latency, submit
#          to completion) of rl-thread, rl-uring and nbdkit.
#          Goal: each readlab model's p50 ≤ nbdkit's with both clients; uring ≤ thread.
#   c16    16 clients at QD1 (fio --numjobs=16, readlab --numjobs 16): IOPS (fio: its jobs' I/Os
#          over the wall time of the fio run; p50/p99: the median of its jobs'), server CPU per I/O
#          (utime+stime of the server process from /proc/PID/stat over the run), IOPS per server
#          core, ratios against nbdkit. Goal: IOPS ≥ 1.5× nbdkit and IOPS per server core ≥ 1.5×.
#          SPLIT=1 (the default on 2 or more CPUs): the server gets the last CPU and the clients
#          the others (taskset), as when the clients run on other machines. Without it, on a
#          small machine 16 clients and the server share the same cores, and the rate measures
#          the clients' CPU per I/O as much as the server's (readlab's client spends ~8 us per
#          I/O here, fio's ~19: a co-located client sets the ceiling for every server alike).
#          The client CPU per I/O is printed (the machine's busy time less the server's) so a
#          client-bound cell shows as one: fio's client cannot fill nbdkit on one core here.
#   sweep  1 … 32 clients at QD1 through readlab's client, qemu-nbd too: IOPS, p99, CPU per I/O,
#          IOPS per core; fio's nbd engine once per server at 16 clients as a cross-check
#          (goal there: uring ≥ 1.5× nbdkit and ≥ 1.2× qemu-nbd in IOPS per server core).
#   delay  the delay injection: QD1 latency on the null back end with --delay 0, 10 and 100 us,
#          client and server sleeping for data and busy-polling (--busy-poll); goal: delays
#          adding 10 ± 3 us and 100 ± 5 us.
#
# A benchmark, not a test: goals are printed and judged, never asserted. On a small shared
# machine run it with nothing else running: a busy machine co-locates client and server and
# hides the wake-up of an idle CPU, which is most of a QD1 round trip on a VM.
#
#   ROUNDS=3 RUNTIME=3 FILE=/dev/shm/vs-nbd.dat bash benches/vs_nbd.sh
#   PARTS=sweep CLIENTS="1 2 4 8 16 32" bash benches/vs_nbd.sh
#   ONLY=delay bash benches/vs_nbd.sh      # the delay injection alone (PARTS=delay)
#   READLAB=/tmp/readlab-before bash benches/vs_nbd.sh   # another build of readlab
# All traffic stays on 127.0.0.1. Needs: nbdkit, fio, python3; qemu-nbd (qemu-utils) for sweep.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-3}
CLIENTS=${CLIENTS:-"1 2 4 8 16 32"}
FILE=${FILE:-/dev/shm/readlab-vs-nbd.dat}
SIZE=${SIZE:-1G}
DELAY_ROUNDS=${DELAY_ROUNDS:-3}
# The uring model's loops (--threads): one per server CPU. With SPLIT=1 (below) the server has
# one CPU; with SPLIT=0 on 2 cores one loop cannot fill both at 16 clients (the machine stays
# ~80% busy) and URING_THREADS=2 is the fair configuration (state it with the figures).
URING_THREADS=${URING_THREADS:-1}
PARTS=${PARTS:-"qd1 c16"}
NCPU=$(nproc)
SPLIT=${SPLIT:-$([ "$NCPU" -ge 2 ] && echo 1 || echo 0)}
SERVER_CPUS=$((NCPU - 1))
CLIENT_CPUS=0-$((NCPU > 1 ? NCPU - 2 : 0))
[ "${ONLY:-}" = delay ] && PARTS=delay
[ "$PARTS" = all ] && PARTS="qd1 c16 sweep delay"
part() { [[ " $PARTS " == *" $1 "* ]]; }
need=(nbdkit fio python3)
if part sweep; then need+=(qemu-nbd); fi
for t in "${need[@]}"; do
    command -v "$t" >/dev/null || { echo "vs_nbd: $t is missing (nbdkit, qemu-utils, fio, python3)" >&2; exit 1; }
done
# READLAB=path/to/readlab measures another build (e.g. the one before a change) with this script.
if [ -z "${READLAB:-}" ]; then cargo build --release -q; fi
R=${READLAB:-$PWD/target/release/readlab}
OUT=$(mktemp -d /tmp/readlab-vs-nbd.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
[ -f "$FILE" ] || "$R" prepare "$FILE" --size "$SIZE" >/dev/null
# The file lives in /dev/shm (no O_DIRECT there): every server reads it through the page cache,
# so what is compared is the servers' own cost per request.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }

declare -A PORT SPID
start() { # name command...
    local name=$1; shift
    local port; port=$(free_port)
    PORT[$name]=$port
    "$@" "$port" >"$OUT/$name.log" 2>&1 &
    SPID[$name]=$!
    PIDS+=($!)
    wait_port "$port"
}
if part qd1 || part c16 || part sweep; then
    start rl-thread sh -c "exec $R serve $FILE --buffered --model thread -q --listen 127.0.0.1:\$0"
    start rl-uring sh -c "exec $R serve $FILE --buffered --model uring --threads $URING_THREADS -q --listen 127.0.0.1:\$0"
    start nbdkit sh -c "exec nbdkit -f -r -i 127.0.0.1 -p \$0 file $FILE"
fi
if part sweep; then
    start qemu-nbd sh -c "exec qemu-nbd -r -f raw --persistent --shared=64 -b 127.0.0.1 -p \$0 $FILE"
fi
SERVERS=(rl-thread rl-uring nbdkit qemu-nbd)
GOAL_SERVERS=(rl-thread rl-uring nbdkit)

cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
# The whole machine's busy ticks (user, nice, system, irq, softirq; not idle, iowait or steal).
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
# Pin every thread of the goal servers (threads they start later inherit it).
pin_servers() { for s in "${GOAL_SERVERS[@]}"; do taskset -a -p -c "$1" "${SPID[$s]}" >/dev/null; done; }
HZ=$(getconf CLK_TCK)
RESULTS=$OUT/results.tsv
: >"$RESULTS"
measure() { # server clients round
    local s=$1 c=$2 r=$3 t0 t1 j
    j=$OUT/run-$s-$c-$r.json
    t0=$(cpu_ticks "${SPID[$s]}")
    "$R" run --engine nbd --numjobs "$c" --iodepth 1 --bs 4k --rw randread --runtime "${RUNTIME}s" \
        --output json -q "nbd://127.0.0.1:${PORT[$s]}/" >"$j"
    t1=$(cpu_ticks "${SPID[$s]}")
    python3 - "$j" "$s" "$c" "$r" "$((t1 - t0))" "$HZ" >>"$RESULTS" <<'EOF'
import json, sys
path, s, c, r, ticks, hz = sys.argv[1:]
d = json.load(open(path)); d = d[0] if isinstance(d, list) else d
res = d["result"]; lat = res["latency"]
ios = lat["count"]; secs = res["seconds"]; iops = res["iops"]
cpu_s = int(ticks) / int(hz)
p99 = lat.get("p99_ns") or 0
print(f"{s}\t{c}\t{r}\t{iops:.0f}\t{p99}\t{cpu_s * 1e6 / max(ios, 1):.2f}\t{cpu_s / secs:.3f}")
EOF
}

GOALS=$OUT/goals.tsv
: >"$GOALS"
# One run: server client(rl|fio) jobs round → a line of goals.tsv: server client jobs round IOPS
# p50_ns p99_ns server-CPU-us-per-IO.
goal_run() {
    local s=$1 cl=$2 n=$3 r=$4 t0 t1 b0 b1 j pin=()
    j=$OUT/goal-$s-$cl-$n-$r.json
    [ "$SPLIT" = 1 ] && [ "$n" -gt 1 ] && pin=(taskset -c "$CLIENT_CPUS")
    t0=$(cpu_ticks "${SPID[$s]}")
    b0=$(busy_ticks)
    local w0; w0=$(date +%s%N)
    if [ "$cl" = rl ]; then
        "${pin[@]}" "$R" run --engine nbd --numjobs "$n" --iodepth 1 --bs 4k --rw randread --runtime "${RUNTIME}s" \
            --output json -q "nbd://127.0.0.1:${PORT[$s]}/" >"$j" 2>/dev/null || true
    else
        "${pin[@]}" fio --name=x --ioengine=nbd --uri="nbd://127.0.0.1:${PORT[$s]}/" --rw=randread --bs=4k \
            --numjobs="$n" --iodepth=1 --runtime="$RUNTIME" --time_based \
            --lat_percentiles=1 --output-format=json 2>/dev/null | sed -n '/^{/,$p' >"$j" || true
    fi
    t1=$(cpu_ticks "${SPID[$s]}")
    b1=$(busy_ticks)
    local wall=$(($(date +%s%N) - w0))
    python3 - "$j" "$s" "$cl" "$n" "$r" "$((t1 - t0))" "$HZ" "$wall" "$((b1 - b0))" >>"$GOALS" <<'PY'
import json, statistics, sys
path, s, cl, n, r, ticks, hz, wall, busy = sys.argv[1:]
try:
    d = json.load(open(path))
    if cl == "rl":
        d = d[0] if isinstance(d, list) else d
        res = d["result"]; lat = res["latency"]
        iops = res["iops"]
        ios = iops * res["seconds"]
        p50, p99 = lat.get("p50_ns") or 0, lat.get("p99_ns") or 0
    else:
        # The jobs' I/Os (they match the server's own count) over the wall time of the whole
        # fio run, start-up included: fio's IOPS (summed per job or group_reporting) assume its
        # jobs ran at once, but against nbdkit a 3 s time_based run of 16 jobs takes 5-6 s (their
        # windows are staggered), so their sum came out ~1.7x what the server served per second
        # (and more than its CPU could have). Each job's p50/p99, their median.
        jobs = [j["read"] for j in d["jobs"]]
        ios = sum(rd["total_ios"] for rd in jobs)
        iops = ios / (int(wall) / 1e9)
        pct = lambda q: statistics.median(rd["lat_ns"]["percentile"][q] for rd in jobs)
        p50, p99 = pct("50.000000"), pct("99.000000")
except Exception as e:
    print(f"vs_nbd: {s} {cl} ×{n}: no result ({e})", file=sys.stderr)
    sys.exit(0)
us = int(ticks) / int(hz) * 1e6 / max(ios, 1)
# Everything else the machine did per I/O: the client, mostly.
rest = (int(busy) - int(ticks)) / int(hz) * 1e6 / max(ios, 1)
print(f"{s}\t{cl}\t{n}\t{r}\t{iops:.0f}\t{p50}\t{p99}\t{us:.2f}\t{rest:.2f}")
PY
}
goal_rounds() { # jobs
    local n=$1 r k s cl
    for r in $(seq "$ROUNDS"); do
        for cl in rl fio; do
            # Rotate the order every round so no server always runs first.
            for k in 0 1 2; do
                s=${GOAL_SERVERS[$(((k + r) % 3))]}
                goal_run "$s" "$cl" "$n" "$r"
            done
        done
    done
}
if part qd1; then
    echo "== qd1: one client × QD1, 4 KiB, ${ROUNDS} interleaved rounds × ${RUNTIME}s, readlab's client and fio's" >&2
    goal_rounds 1
fi
if part c16; then
    echo "== c16: 16 clients × QD1, 4 KiB, ${ROUNDS} interleaved rounds × ${RUNTIME}s, readlab's client and fio's" >&2
    if [ "$SPLIT" = 1 ]; then
        echo "   servers on CPU $SERVER_CPUS, clients on CPU $CLIENT_CPUS (SPLIT=0: all share all)" >&2
        pin_servers "$SERVER_CPUS"
    fi
    goal_rounds 16
    [ "$SPLIT" = 1 ] && pin_servers "0-$((NCPU - 1))"
fi
if part qd1 || part c16; then
python3 - "$GOALS" "$SPLIT" "$SERVER_CPUS" "$CLIENT_CPUS" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines() if l]
split, server_cpus, client_cpus = sys.argv[2:5]
by = {}
rounds = {}
for s, cl, n, r, iops, p50, p99, us, rest in rows:
    by.setdefault((s, cl, int(n)), []).append((float(iops), float(p50) / 1e3, float(p99) / 1e3, float(us), float(rest)))
    rounds[(s, cl, int(n), r)] = float(iops)
med = lambda v, i: statistics.median(x[i] for x in v) if v else float("nan")
names = {"rl": "readlab's client", "fio": "fio's nbd engine"}
judge = lambda ok: "met" if ok else "NOT MET"
servers = ("rl-thread", "rl-uring", "nbdkit")
if any(k[2] == 1 for k in by):
    print("QD1, one client, 4 KiB (medians; us; fio: total latency, submit to completion)")
    for cl in ("rl", "fio"):
        v = {s: by.get((s, cl, 1), []) for s in servers}
        print(f"  {names[cl]}:" + "".join(
            f"  {s} p50 {med(v[s], 1):.1f} p99 {med(v[s], 2):.1f};" for s in servers))
        k = med(v["nbdkit"], 1)
        t, u = med(v["rl-thread"], 1), med(v["rl-uring"], 1)
        print(f"    p50 / nbdkit: rl-thread {t / k:.2f}, rl-uring {u / k:.2f} (goal ≤ 1: "
              f"{judge(t <= k)}, {judge(u <= k)}); rl-uring / rl-thread {u / t:.2f} "
              f"(goal ≤ 1: {judge(u <= t)})")
if any(k[2] == 16 for k in by):
    where = (f"servers on CPU {server_cpus}, clients on CPU {client_cpus}" if split == "1"
             else "servers and clients sharing every CPU")
    print(f"16 clients × QD1, 4 KiB (medians; {where}; server CPU per I/O from /proc/PID/stat, "
          "client: the rest of the machine's busy time)")
    for cl in ("rl", "fio"):
        v = {s: by.get((s, cl, 16), []) for s in servers}
        per_core = {s: 1e6 / med(v[s], 3) if med(v[s], 3) > 0 else float("nan") for s in servers}
        print(f"  {names[cl]}:")
        for s in servers:
            print(f"    {s:9} {med(v[s], 0):8.0f} IOPS  server {med(v[s], 3):5.1f} us CPU/IO  "
                  f"{per_core[s]:8.0f} IOPS per server core  client {med(v[s], 4):5.1f} us CPU/IO  "
                  f"p99 {med(v[s], 2):7.1f} us")
        k, kc = med(v["nbdkit"], 0), per_core["nbdkit"]
        for s in ("rl-thread", "rl-uring"):
            a, b = med(v[s], 0) / k, per_core[s] / kc
            # The same round's runs are minutes apart at most: their ratio shows the spread.
            each = sorted(rounds[(s, cl, 16, r)] / rounds[(t, c, n, r)]
                          for (t, c, n, r) in rounds if t == "nbdkit" and c == cl and n == 16
                          and (s, cl, 16, r) in rounds)
            print(f"    {s} / nbdkit: IOPS {a:.2f} (goal ≥ 1.5: {judge(a >= 1.5)}; rounds "
                  + " ".join(f"{x:.2f}" for x in each)
                  + f"), IOPS per server core {b:.2f} (goal ≥ 1.5: {judge(b >= 1.5)})")
PY
fi

if part sweep; then
echo "vs_nbd: ${ROUNDS} rounds × clients {$CLIENTS} × ${#SERVERS[@]} servers × ${RUNTIME}s; results in $OUT" >&2
for r in $(seq "$ROUNDS"); do
    for c in $CLIENTS; do
        # Rotate the order every round so no server always runs first.
        for k in $(seq 0 $((${#SERVERS[@]} - 1))); do
            s=${SERVERS[$(((k + r + c) % ${#SERVERS[@]}))]}
            measure "$s" "$c" "$r"
        done
    done
done

echo "== fio --ioengine=nbd cross-check, 16 jobs × iodepth 1, 4 KiB" >&2
for s in "${SERVERS[@]}"; do
    fio --name=x --ioengine=nbd --uri="nbd://127.0.0.1:${PORT[$s]}/" --rw=randread --bs=4k \
        --numjobs=16 --iodepth=1 --group_reporting --runtime="$RUNTIME" --time_based \
        --output-format=json 2>/dev/null | sed -n '/^{/,$p' >"$OUT/fio-$s.json" || true
done

python3 - "$RESULTS" "$OUT" "${SERVERS[@]}" <<'EOF'
import json, statistics, sys, os
path, out, *servers = sys.argv[1:]
rows = [l.split("\t") for l in open(path).read().splitlines() if l]
by = {}
for s, c, r, iops, p99, us, cores in rows:
    by.setdefault((s, int(c)), []).append((float(iops), float(p99), float(us), float(cores)))
med = lambda xs: statistics.median(xs)
clients = sorted({int(r[1]) for r in rows})
print("clients  " + "".join(f"{s:>34}" for s in servers))
print("         " + "".join(f"{'IOPS  p99us  us/IO  IOPS/core':>34}" for _ in servers))
for c in clients:
    line = f"{c:7}  "
    for s in servers:
        v = by.get((s, c), [])
        if not v:
            line += f"{'-':>34}"; continue
        iops = med([x[0] for x in v]); p99 = med([x[1] for x in v]) / 1e3
        us = med([x[2] for x in v]); per_core = 1e6 / us if us > 0 else float("nan")
        line += f"{iops:11.0f} {p99:6.0f} {us:6.1f} {per_core:9.0f}"
    print(line)
def per_core(s, c):
    v = by.get((s, c));  us = med([x[2] for x in v]) if v else 0
    return 1e6 / us if us else float("nan")
def ratio_line(c):
    u = per_core("rl-uring", c); t = per_core("rl-thread", c)
    k = per_core("nbdkit", c); q = per_core("qemu-nbd", c)
    return (f"{c} clients, IOPS per server core: uring/nbdkit {u / k:.2f} (goal ≥ 1.5), "
            f"uring/qemu-nbd {u / q:.2f} (goal ≥ 1.2), thread/nbdkit {t / k:.2f}, thread/qemu-nbd {t / q:.2f}")
for c in clients:
    if c == 16 or c == max(clients):
        print(ratio_line(c))
def p99r(c, a, b):
    va = by.get((a, c)); vb = by.get((b, c))
    return med([x[1] for x in va]) / med([x[1] for x in vb]) if va and vb else float("nan")
def iopsr(c, a, b):
    va = by.get((a, c)); vb = by.get((b, c))
    return med([x[0] for x in va]) / med([x[0] for x in vb]) if va and vb else float("nan")
for c in clients:
    print(f"{c:3} clients: IOPS uring/nbdkit {iopsr(c,'rl-uring','nbdkit'):.2f} uring/qemu {iopsr(c,'rl-uring','qemu-nbd'):.2f}"
          f" thread/nbdkit {iopsr(c,'rl-thread','nbdkit'):.2f}; p99 uring/nbdkit {p99r(c,'rl-uring','nbdkit'):.2f}"
          f" uring/qemu {p99r(c,'rl-uring','qemu-nbd'):.2f}")
print("fio nbd, 16 jobs × QD1:")
for s in servers:
    try:
        j = json.load(open(os.path.join(out, f"fio-{s}.json")))["jobs"][0]["read"]
        p99 = j["clat_ns"]["percentile"].get("99.000000", 0) / 1e3
        print(f"  {s:10} {j['iops']:9.0f} IOPS  clat p99 {p99:6.0f} us")
    except Exception as e:
        print(f"  {s:10} no result ({e})")
EOF
fi
cleanup
PIDS=()

part delay || exit 0
echo "== delay injection: QD1 4 KiB on --null 1g, delays 0/10/100 us, sleeping and busy-polling, ${DELAY_ROUNDS} interleaved rounds" >&2
DL=$OUT/delay.tsv
: >"$DL"
# "sleep": client and server sleep in the kernel for data (the usual way); "poll": both spin on
# their sockets (--busy-poll), so the wake-up of an idle CPU, whose cost on a VM depends on how
# long it slept, is not in the latency.
for model in thread uring; do
    for d in 0 10 100; do
        start "null-$model-$d-sleep" sh -c "exec $R serve --null 1g --delay ${d}us --model $model -q --listen 127.0.0.1:\$0"
        start "null-$model-$d-poll" sh -c "exec $R serve --null 1g --delay ${d}us --model $model --busy-poll -q --listen 127.0.0.1:\$0"
    done
done
for r in $(seq "$DELAY_ROUNDS"); do
    for model in thread uring; do
        for how in sleep poll; do
            flag=""
            [ "$how" = poll ] && flag=--busy-poll
            for d in 0 10 100; do
                j=$OUT/delay-$model-$how-$d-$r.json
                "$R" run --engine nbd --iodepth 1 --bs 4k --runtime "${RUNTIME}s" $flag --output json -q \
                    "nbd://127.0.0.1:${PORT[null-$model-$d-$how]}/" >"$j"
                python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d=d[0] if isinstance(d,list) else d; l=d["result"]["latency"]; print(sys.argv[2], sys.argv[3], sys.argv[4], l["mean_ns"], l.get("p50_ns", 0), sep="\t")' "$j" "$model" "$how" "$d" >>"$DL"
            done
        done
    done
done
python3 - "$DL" <<'EOF'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines() if l]
for model in ("thread", "uring"):
    for how in ("sleep", "poll"):
        sel = lambda d, col: statistics.median(float(r[col]) for r in rows if r[0] == model and r[1] == how and r[2] == d) / 1e3
        m = {d: sel(d, 3) for d in ("0", "10", "100")}
        p = {d: sel(d, 4) for d in ("0", "10", "100")}
        print(f"{model:6} {how:5} QD1 p50: 0us {p['0']:.1f}  10us {p['10']:.1f}  100us {p['100']:.1f}  "
              f"→ +{p['10'] - p['0']:.1f} us (goal 10 ± 3), +{p['100'] - p['0']:.1f} us (goal 100 ± 5); "
              f"mean: +{m['10'] - m['0']:.1f}, +{m['100'] - m['0']:.1f}")
EOF
