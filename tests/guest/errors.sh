# what: device errors: a device-mapper `error` segment at known sectors and dm-flakey corrupting reads; run, study and tune count them with offsets
#@ mem 1G
#@ timeout 300
#@ drive nvme 256M prepared
#@ modules dm-mod dm-flakey
#@ tools dmsetup
# The prepared NVMe drive (256 MiB = 524288 sectors of 512 B) behind two device-mapper tables:
#  rl-err:    linear, except sectors 131072..147455 (bytes 64 MiB..72 MiB) which are an `error`
#             target; the linear parts keep their offsets, so the data still verifies there.
#  rl-flakey: dm-flakey always "down" with corrupt_bio_byte 100 r 0: byte 100 (1-based) of every
#             read bio is set to 0, so --verify finds a mismatch at offset 99 of each read.
# No udev in the guest: dmsetup makes its own nodes (DM_DISABLE_UDEV, --noudevsync).
export DM_DISABLE_UDEV=1
need_dev /dev/nvme0n1
[ -c /dev/mapper/control ] || { mkdir -p /dev/mapper && mknod /dev/mapper/control c 10 236; }
sectors=$(cat /sys/block/nvme0n1/size)
[ "$sectors" -eq 524288 ] || fail "nvme0n1 has $sectors sectors, not 524288"
ES=131072
EL=16384
printf '0 %d linear /dev/nvme0n1 0\n%d %d error\n%d %d linear /dev/nvme0n1 %d\n' \
    "$ES" "$ES" "$EL" "$((ES + EL))" "$((sectors - ES - EL))" "$((ES + EL))" >table-err.txt
dmsetup create rl-err --noudevsync <table-err.txt || fail "dmsetup create rl-err"
echo "0 $sectors flakey /dev/nvme0n1 0 0 1 5 corrupt_bio_byte 100 r 0 0" >table-flakey.txt
dmsetup create rl-flakey --noudevsync <table-flakey.txt || fail "dmsetup create rl-flakey"
dmsetup table >tables.txt
cat tables.txt
# the node: /dev/mapper/NAME from dmsetup, else devtmpfs's /dev/dm-N
node() {
    [ -b "/dev/mapper/$1" ] && { echo "/dev/mapper/$1"; return; }
    n=$(dmsetup info -c --noheadings -o minor "$1" | tr -d ' ')
    [ -b "/dev/dm-$n" ] || mknod "/dev/dm-$n" b "$(dmsetup info -c --noheadings -o major "$1" | tr -d ' ')" "$n"
    echo "/dev/dm-$n"
}
ERR=$(node rl-err)
FLK=$(node rl-flakey)
need_dev "$ERR"
need_dev "$FLK"
echo "$ERR $ES $EL" >err-device.txt

# expect_fail NAME CMD...: run CMD, keep its output in NAME.out and its exit code in NAME.rc
expect_fail() {
    n=$1
    shift
    step "$n: $*"
    "$@" >"$n.out" 2>&1
    echo $? >"$n.rc"
    grep -a 'readlab: ' "$n.out" | head -5
    echo "exit $(cat "$n.rc")"
}
# a clean read of the linear parts first: the mapping keeps the data verifiable
expect_fail run-clean readlab run "$ERR" --size 64M --verify --runtime 1s -q --json run-clean.json
# random reads around the error segment (60..76 MiB, half of it the segment), a count of them
# rather than a time: 64 reads of 4 KiB (--io-limit 256k; --runtime only bounds it), whose offsets
# the default seed fixes (32 of them in the segment), however slowly the emulated guest reads
expect_fail run-err readlab run "$ERR" --engine psync --offset 60M --size 16M --io-limit 256k \
    --verify --runtime 60s -q --json run-err.json
expect_fail run-err-uring readlab run "$ERR" --engine uring --iodepth 8 --offset 60M --size 16M \
    --io-limit 256k --verify --runtime 60s -q --json run-err-uring.json
# sequential reads of 63..65 MiB once (32 reads of 64 KiB): the first error is at 64 MiB exactly
expect_fail run-seq readlab run "$ERR" --rw read --bs 64k --offset 63M --size 2M --io-limit 2M \
    --verify --runtime 60s -q --json run-seq.json
expect_fail study-err readlab study latency "$ERR" --quick --runtime 200ms --out study-err \
    --json study-err.json
expect_fail tune-err readlab tune "$ERR" --budget 20s --engines psync,uring --repeat 1 \
    --out tune-err --json tune-err.json
# corruption on every read: found by --verify, with its offset
expect_fail run-flakey readlab run "$FLK" --verify --runtime 1s -q --json run-flakey.json
# the failed points in a report: the study's and the runs' (their errors and offsets with them)
readlab report study-err run-err.json run-flakey.json --format md -o errors-report.md \
    >report-err.out 2>&1
echo $? >report-err.rc
dmsetup remove rl-err --noudevsync
dmsetup remove rl-flakey --noudevsync
echo "errors done"
