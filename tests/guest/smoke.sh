# what: the harness itself: boot, load a module, read a prepared NVMe drive with verification
#@ mem 1G
#@ timeout 120
#@ drive nvme 256M prepared
#@ modules null_blk
lsmod > modules.txt
need_dev /dev/nvme0n1
readlab run /dev/nvme0n1 --engine uring --verify --runtime 1s --json run.json || fail "readlab run failed"
