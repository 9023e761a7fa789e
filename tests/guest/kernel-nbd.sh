# what: the kernel's NBD client reading readlab serve (thread and uring models) on 127.0.0.1
#@ mem 1G
#@ timeout 240
#@ drive nvme 256M prepared
#@ modules nbd
#@ debs nbd-client libnl-genl-3-200
need_dev /dev/nvme0n1
need_dev /dev/nbd0
command -v nbd-client >/dev/null || fail "no nbd-client in the guest"
: >/etc/nbdtab
port=10809
for model in thread uring; do
    step "serve --model $model"
    readlab serve /dev/nvme0n1 --listen "127.0.0.1:$port" --model "$model" -q \
        --json "serve-$model.json" >"serve-$model.out" 2>&1 &
    srv=$!
    i=0
    until grep -q "listening on" "serve-$model.out" 2>/dev/null; do
        i=$((i + 1))
        [ "$i" -lt 300 ] || { kill "$srv"; fail "readlab serve --model $model did not start: $(cat "serve-$model.out")"; }
        sleep 0.1
    done
    step "nbd-client attaches /dev/nbd0 ($model)"
    nbd-client 127.0.0.1 "$port" /dev/nbd0 -N '' >"attach-$model.out" 2>&1 ||
        { kill "$srv"; fail "nbd-client did not attach ($model): $(cat "attach-$model.out")"; }
    echo "size=$(cat /sys/block/nbd0/size)" >"attached-$model.txt"
    step "run --verify /dev/nbd0 ($model)"
    readlab run /dev/nbd0 --verify --runtime 1s --json "run-$model.json" >"run-$model.out" 2>&1
    echo "run exit $?" >>"run-$model.out"
    step "study latency /dev/nbd0 ($model)"
    readlab study latency /dev/nbd0 --quick --runtime 600ms --out "study-$model" >"study-$model.out" 2>&1
    echo "study exit $?" >>"study-$model.out"
    step "nbd-client -d /dev/nbd0 ($model)"
    nbd-client -d /dev/nbd0 >"detach-$model.out" 2>&1
    echo "detach exit $?" >>"detach-$model.out"
    # the kernel clears the device once the client's socket is gone (slow when other guests share
    # the machine: up to 20 s)
    i=0
    while { [ "$(cat /sys/block/nbd0/size)" != 0 ] || [ -e /sys/block/nbd0/pid ]; } && [ "$i" -lt 200 ]; do
        i=$((i + 1))
        sleep 0.1
    done
    echo "cleared after ~$((i * 100)) ms" >>"detach-$model.out"
    pid=absent
    [ -e /sys/block/nbd0/pid ] && pid=$(cat /sys/block/nbd0/pid)
    echo "size=$(cat /sys/block/nbd0/size) pid=$pid" >"detached-$model.txt"
    kill "$srv"
    wait "$srv"
    echo "serve exit $?" >>"serve-$model.out"
    tail -4 "study-$model.out"
    cat "run-$model.out" "detach-$model.out" "detached-$model.txt"
    port=$((port + 1))
done
step "report"
readlab report study-thread study-uring --format md -o report.md >/dev/null 2>&1 || fail "readlab report failed"
