# what: the delay study over veth between two namespaces: netem's delay beside the server's --delay
#@ mem 1G
#@ timeout 240
#@ modules veth sch_netem
#@ tools ip tc
step "delay study over veth, netem 100us and 1ms beside the server's delays"
readlab study delay --quick --runtime 300ms --network veth --netem 100us,1ms --out delay >delay.out 2>&1
echo "study exit $?" >>delay.out
cat delay.out
# the namespaces (and with them the veth pair and its netem qdisc) are gone after the study
ip netns list >netns-after.txt 2>&1
step "report"
readlab report delay --format md -o report.md >/dev/null 2>&1 || fail "readlab report --format md failed"
readlab report delay -o report.html >/dev/null 2>&1 || fail "readlab report failed"
