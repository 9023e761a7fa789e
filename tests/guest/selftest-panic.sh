# what: harness self-test: a kernel panic ends the guest and fails with its reason
#@ timeout 60
echo c > /proc/sysrq-trigger
sleep 30
