# what: a page cache smaller than the data: the cache study on a 3 GiB NVMe drive with 512 MiB of RAM
#@ mem 512M
#@ timeout 300
#@ drive nvme 3G prepared
need_dev /dev/nvme0n1
grep -E '^(MemTotal|MemAvailable|Cached):' /proc/meminfo >meminfo-before.txt
grep -E '^(pgsteal|pgscan)_(kswapd|direct) ' /proc/vmstat >vmstat-before.txt
cat /sys/block/nvme0n1/queue/read_ahead_kb >read_ahead_kb-before.txt
step "study cache on /dev/nvme0n1 (3 GiB) with $(sed -n 's/^MemTotal: *//p' /proc/meminfo) of RAM"
readlab study cache /dev/nvme0n1 --quick --allow-device-changes --no-verify --color never \
    --out study --json study.json >study.out 2>&1 || { cat study.out; fail "readlab study cache failed"; }
cat study.out
grep -E '^(pgsteal|pgscan)_(kswapd|direct) ' /proc/vmstat >vmstat-after.txt
cat /sys/block/nvme0n1/queue/read_ahead_kb >read_ahead_kb-after.txt
