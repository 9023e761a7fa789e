#!/usr/bin/env python3
"""tree_cpu.py FROM_S TO_S OUT -- COMMAND...: the CPU of a command's whole process tree in a window.

benches/vs_fio.sh measures readlab and fio with this one instrument, so neither tool's CPU comes
from its own bookkeeping: every thread of the command and of the processes it forks (fio's job
processes, its status and disk-util threads, readlab's main thread, io_uring's io-wq and SQPOLL
threads, which are threads of the process) is counted, from FROM_S to TO_S seconds after the start.
Kernel threads serving both tools alike (a loop device's kworker) are counted for neither.

Runs COMMAND with this script's stdin/stdout/stderr, waits for it, writes OUT as JSON
{"cpu_s", "window_s", "tasks", "how", "machine"} and exits with COMMAND's status.

It also writes what the whole machine did in the same window ("machine": CPUs busy, CPUs stolen by
the hypervisor, CPUs there are, from /proc/stat), so a comparison can tell a tool that kept a core
busy from one waiting on kernel threads that serve the reads.

CPU is the precise per-thread run time (/proc/PID/task/TID/schedstat, nanoseconds) when the same
threads are alive at both samples; when threads came or went in between it falls back to the
processes' utime+stime (/proc/PID/stat, which keeps exited threads' time, in clock ticks).
"""
import json
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def stat(pid):
    """(ppid, utime+stime in seconds) of a process, or None if it is gone."""
    try:
        text = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def tree(root):
    """{pid: utime+stime in seconds} of the root and every process descending from it."""
    stats = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            s = stat(int(name))
            if s:
                stats[int(name)] = s
    found, frontier = {root}, [root]
    while frontier:
        p = frontier.pop()
        for child, (ppid, _) in stats.items():
            if ppid == p and child not in found:
                found.add(child)
                frontier.append(child)
    return {pid: stats[pid][1] for pid in found if pid in stats}


def sample(root):
    """{(pid, tid): run ns} for every live thread, and the tree's utime+stime in seconds."""
    threads = {}
    procs = tree(root)
    for pid in procs:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                threads[(pid, int(tid))] = int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return threads, sum(procs.values())


def machine():
    """(busy, steal) seconds of every CPU since boot: /proc/stat's first line, in clock ticks."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    # user nice system idle iowait irq softirq steal (guest time is inside user already)
    return sum(f[0:3]) + f[5] + f[6], f[7]


def main():
    if len(sys.argv) < 6 or sys.argv[4] != "--":
        sys.exit("usage: tree_cpu.py FROM_S TO_S OUT -- COMMAND...")
    t_from, t_to, out = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    start = time.monotonic()
    child = subprocess.Popen(sys.argv[5:])
    samples = []
    for at in (t_from, t_to):
        delay = start + at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        if child.poll() is not None:
            break
        samples.append((time.monotonic(), *sample(child.pid), machine()))
    status = child.wait()
    doc = {"cpu_s": None, "window_s": None, "tasks": 0, "how": "command ended before the window did"}
    if len(samples) == 2:
        (t0, th0, tk0, m0), (t1, th1, tk1, m1) = samples
        same = th0.keys() == th1.keys()
        cpu = sum(th1[k] - th0[k] for k in th1) / 1e9 if same else tk1 - tk0
        doc = {"cpu_s": cpu, "window_s": t1 - t0, "tasks": len(th1),
               "how": "schedstat" if same else "stat ticks (threads came or went)",
               "machine": {"busy_cpus": (m1[0] - m0[0]) / TICK / (t1 - t0),
                           "steal_cpus": (m1[1] - m0[1]) / TICK / (t1 - t0),
                           "cpus": os.sysconf("SC_NPROCESSORS_ONLN")}}
    with open(out, "w") as f:
        json.dump(doc, f)
    sys.exit(status)


if __name__ == "__main__":
    main()
