# what: NVMe with poll queues: info, IOPOLL and RWF_HIPRI verified, completion interrupts per I/O, SQPOLL+IOPOLL, uring-features
#@ mem 1G
#@ timeout 240
#@ append nvme.poll_queues=2
#@ drive nvme 256M prepared
#@ tools fio
need_dev /dev/nvme0n1
D=/dev/nvme0n1
cat /sys/block/nvme0n1/queue/io_poll > io_poll.txt
for h in /sys/kernel/debug/block/nvme0n1/hctx*; do echo "$h $(cat "$h/type" 2>/dev/null)"; done > hctx-types.txt

step "info"
readlab info $D --json info.json > info.txt || fail "readlab info failed"

# one run per way of completing: plain interrupts, IOPOLL, SQPOLL+IOPOLL, sync RWF_HIPRI, sync;
# buffered reads (page-cache hits raise no interrupt either: no verdict)
for r in "uring:--engine uring" "iopoll:--engine uring --iopoll" "sqpoll-iopoll:--engine uring --iopoll --sqpoll" \
         "uring-qd8:--engine uring --iodepth 8" "iopoll-qd8:--engine uring --iopoll --iodepth 8" \
         "pvsync2:--engine pvsync2" "hipri:--engine pvsync2 --hipri" "buffered:--engine psync --buffered"; do
    name=${r%%:*}; args=${r#*:}
    step "run $name: $args"
    readlab run $D $args --verify --runtime 1s --json "$name.json" --color never > "$name.txt" 2>&1 ||
        fail "readlab run $name failed: $(tail -5 "$name.txt")"
done

step "fio pvsync2 --hipri on the same device"
cat /proc/interrupts > fio-hipri-irq-before.txt
fio --name=hipri --filename=$D --ioengine=pvsync2 --hipri --direct=1 --rw=randread --bs=4k \
    --runtime=1 --time_based --output-format=json --output=fio-hipri.json || fail "fio failed"
cat /proc/interrupts > fio-hipri-irq-after.txt

step "study uring-features"
readlab study uring-features $D --quick --runtime 300ms --out uf --color never > uf.txt 2>&1 ||
    fail "study uring-features failed: $(tail -5 uf.txt)"
readlab report uf --format md -o uf-report.md > /dev/null 2>&1 || fail "readlab report failed"
step "done"
