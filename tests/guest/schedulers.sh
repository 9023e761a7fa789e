# what: the scheduler study on an NVMe drive across none, mq-deadline, kyber and bfq; the original restored, also after Ctrl-C
#@ mem 1G
#@ timeout 240
#@ drive nvme 256M prepared
#@ modules mq-deadline kyber-iosched bfq
need_dev /dev/nvme0n1
D=/dev/nvme0n1
S=/sys/block/nvme0n1/queue/scheduler
# start from a scheduler that is not the kernel's default, so a restore to "none" would not pass
echo mq-deadline > $S || fail "cannot set mq-deadline"
cat $S > sched-before.txt

step "study scheduler"
readlab study scheduler $D --quick --runtime 300ms --max-threads 2 --out sched --color never > sched.txt 2>&1 ||
    fail "study scheduler failed: $(tail -5 sched.txt)"
cat $S > sched-after.txt
readlab report sched --format md -o sched-report.md > /dev/null 2>&1 || fail "readlab report failed"

step "study scheduler, interrupted with SIGINT once it switched away from the original"
readlab study scheduler $D --quick --runtime 300ms --max-threads 2 --out sched-int --color never > sched-int.txt 2>&1 &
pid=$!
i=0
while [ $i -lt 200 ]; do
    case "$(cat $S)" in *"[mq-deadline]"*) ;; *) break ;; esac
    sleep 0.1; i=$((i + 1))
done
cat $S > sched-during.txt
kill -INT $pid
wait $pid
echo $? > sched-int.rc
cat $S > sched-after-int.txt
step "done"
