# what: a device of known latency: null_blk (timer mode) with completion_nsec 0, 100 us and 1 ms; readlab beside fio
#@ mem 1G
#@ timeout 240
#@ modules null_blk
#@ tools fio
# Three null_blk devices made through configfs, each completing every request after a timer of
# completion_nsec (irqmode=2), not memory-backed (reads return whatever null_blk hands back: no
# --verify). On each, two configurations (psync QD1, io_uring QD32), each measured by readlab and by
# fio interleaved A B A B (readlab, fio, readlab, fio) so both tools see the same drift of a busy
# host. The host side (tests/guest_null_errors.rs) checks the floor and the agreement.
RT=${RT:-1}
# QD32 runs of both tools pinned alike (taskset mask; PIN= unpinned). Measured: pinning did not
# visibly change fio's QD32 spread; it keeps the two tools on equal terms
PIN=${PIN-1}
cfg=/sys/kernel/config/nullb
[ -d "$cfg" ] || fail "no $cfg: configfs not mounted or null_blk without configfs support"
lsmod >modules.txt
: >devices.txt
i=1
for nsec in 0 100000 1000000; do
    d=$cfg/nullb$i
    mkdir "$d" || fail "mkdir $d"
    echo 2 >"$d/irqmode" && echo "$nsec" >"$d/completion_nsec" && echo 4096 >"$d/blocksize" &&
        echo 64 >"$d/size" && echo 0 >"$d/memory_backed" && echo 1 >"$d/power" ||
        fail "configuring $d (completion_nsec $nsec)"
    idx=$(cat "$d/index")
    dev=/dev/nullb$idx
    [ -b "$dev" ] || dev=/dev/nullb$i
    need_dev "$dev"
    echo "$i $nsec $dev $(cat "$d/irqmode") $(cat "$d/completion_nsec")" >>devices.txt
    i=$((i + 1))
done
cat devices.txt
while read -r n nsec dev _; do
    for conf in psync1 uring32; do
        case $conf in
            psync1) rle="--engine psync --iodepth 1"; fe="--ioengine=psync --iodepth=1" ;;
            uring32) rle="--engine uring --iodepth 32"; fe="--ioengine=io_uring --iodepth=32 --nonvectored=1" ;;
        esac
        # QD32 pinned to one CPU, both tools alike (PIN above)
        pin=""
        [ "$conf" = uring32 ] && [ -n "$PIN" ] && pin="taskset $PIN"
        for round in 1 2; do
            step "nullb$n (completion_nsec $nsec) $conf round $round: readlab"
            # shellcheck disable=SC2086
            $pin readlab run "$dev" $rle --bs 4k --rw randread --runtime "${RT}s" -q \
                --json "rl-$n-$conf-$round.json" >"rl-$n-$conf-$round.out" 2>&1 ||
                fail "readlab on $dev ($conf): $(tail -3 "rl-$n-$conf-$round.out")"
            grep -m1 latency "rl-$n-$conf-$round.out"
            step "nullb$n (completion_nsec $nsec) $conf round $round: fio"
            # shellcheck disable=SC2086
            $pin fio --name=rl --filename="$dev" --direct=1 --rw=randread --bs=4k $fe \
                --runtime="$RT" --time_based --disk_util=0 --disable_slat=1 --disable_clat=1 --lat_percentiles=1 --output-format=json \
                --output="fio-$n-$conf-$round.json" >"fio-$n-$conf-$round.err" 2>&1 ||
                fail "fio on $dev ($conf): $(tail -3 "fio-$n-$conf-$round.err")"
        done
    done
done <devices.txt
echo "null-latency done"
