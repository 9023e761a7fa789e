#!/usr/bin/env bash
# readlab serve (thread and uring models) against nbdkit's file plugin and qemu-nbd, all serving the
# same prepared file, measured by the same client: readlab's nbd engine, 4 KiB random reads, 1 … 32
# clients with one request in flight each (the networked-flash document's workload), rounds
# interleaved (every server at every client count once per round, the order rotating). Per server:
# median IOPS, p99, server CPU per I/O (utime+stime of the server's process from /proc/PID/stat
# over the measured run) and IOPS per server core; ratios of the uring model against nbdkit and
# qemu-nbd. fio's nbd engine measures each server once at 16 clients as a cross-check. Then the
# delay injection: QD1 latency on the null back end with --delay 0, 10 and 100 us, client and
# server sleeping for data and busy-polling (--busy-poll).
#
# A benchmark, not a test: the goal (uring ≥ 1.5× nbdkit and ≥ 1.2× qemu-nbd in IOPS per server
# core at 16 clients; delays adding 10 ± 3 us and 100 ± 5 us) is printed, judged, never asserted.
#
#   ROUNDS=3 RUNTIME=3 CLIENTS="1 2 4 8 16 32" FILE=/dev/shm/vs-nbd.dat bash benches/vs_nbd.sh
#   ONLY=delay bash benches/vs_nbd.sh      # the delay injection alone
# All traffic stays on 127.0.0.1. Needs: nbdkit, qemu-nbd (qemu-utils), fio, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-3}
CLIENTS=${CLIENTS:-"1 2 4 8 16 32"}
FILE=${FILE:-/dev/shm/readlab-vs-nbd.dat}
SIZE=${SIZE:-1G}
DELAY_ROUNDS=${DELAY_ROUNDS:-3}
for t in nbdkit qemu-nbd fio python3; do
    command -v "$t" >/dev/null || { echo "vs_nbd: $t is missing (nbdkit, qemu-utils, fio, python3)" >&2; exit 1; }
done
cargo build --release -q
R=$PWD/target/release/readlab
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
start rl-thread sh -c "exec $R serve $FILE --buffered --model thread -q --listen 127.0.0.1:\$0"
start rl-uring sh -c "exec $R serve $FILE --buffered --model uring --threads 1 -q --listen 127.0.0.1:\$0"
start nbdkit sh -c "exec nbdkit -f -r -i 127.0.0.1 -p \$0 file $FILE"
start qemu-nbd sh -c "exec qemu-nbd -r -f raw --persistent --shared=64 -b 127.0.0.1 -p \$0 $FILE"
SERVERS=(rl-thread rl-uring nbdkit qemu-nbd)

cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
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

if [ "${ONLY:-}" != delay ]; then
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
