# benches/workloads.sh — sourced by vs_fio.sh and user_share.sh: the four workloads they compare,
# written as each tool's engine arguments, so both scripts run the same thing. QD is the queue depth
# of the queued workloads (set by the sourcing script).
# tio_engine is the same workload as fio's t/io_uring runs it (vs_fio.sh's bare loop, with TIO): the
# least a program can do per read through that interface (-S preadv2, -a libaio, else io_uring).
WORKLOAD_NAMES="psync libaio uring uring-fixed"

is_workload() { [[ " $WORKLOAD_NAMES " == *" $1 "* ]]; }

rl_engine() {
    case "$1" in
        psync) echo "--engine psync --iodepth 1" ;;
        libaio) echo "--engine libaio --iodepth $QD" ;;
        uring) echo "--engine uring --iodepth $QD" ;;
        uring-fixed) echo "--engine uring --iodepth $QD --fixed-files --fixed-bufs" ;;
    esac
}

fio_engine() {
    case "$1" in
        psync) echo "--ioengine=psync --iodepth=1" ;;
        libaio) echo "--ioengine=libaio --iodepth=$QD" ;;
        uring) echo "--ioengine=io_uring --iodepth=$QD" ;;
        uring-fixed) echo "--ioengine=io_uring --iodepth=$QD --registerfiles=1 --fixedbufs=1" ;;
    esac
}

tio_engine() {
    case "$1" in
        psync) echo "-S 1 -d 1 -s 1 -c 1 -B 0 -F 0" ;;
        libaio) echo "-a 1 -d $QD -s 1 -c 1 -B 0 -F 0" ;;
        uring) echo "-d $QD -s 1 -c 1 -B 0 -F 0" ;;
        uring-fixed) echo "-d $QD -s 1 -c 1 -B 1 -F 1" ;;
    esac
}
