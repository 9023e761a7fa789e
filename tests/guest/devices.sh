# what: three NVMe drives: the devices study and one run on all three with the monitor
#@ mem 1G
#@ timeout 240
#@ drive nvme 256M prepared
#@ drive nvme 256M prepared
#@ drive nvme 256M prepared
for d in nvme0n1 nvme1n1 nvme2n1; do need_dev /dev/$d; done
T="/dev/nvme0n1 /dev/nvme1n1 /dev/nvme2n1"

step "study devices"
readlab study devices $T --quick --runtime 500ms --out devs --color never > devs.txt 2>&1 ||
    fail "study devices failed: $(tail -5 devs.txt)"
readlab report devs --format md -o devs-report.md > /dev/null 2>&1 || fail "readlab report failed"

step "run on three targets with the monitor"
readlab run $T --engine uring --iodepth 8 --runtime 3s --monitor --verify --json multi.json \
    --color never > multi.txt 2>&1 || fail "readlab run on three targets failed: $(tail -5 multi.txt)"
step "done"
