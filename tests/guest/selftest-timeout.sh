# what: harness self-test: a scenario past its time limit is stopped and fails with its reason
#@ timeout 10
sleep 1000
