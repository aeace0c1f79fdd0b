#!/usr/bin/env python3
"""Run a command, report wall time, peak RSS and peak anonymous RSS (Linux).

Usage: scripts/measure.py -- CMD [ARGS...]
Prints one line: `wall_s=<s> peak_rss_kb=<kb> peak_anon_kb=<kb> exit=<code> cpu_s=<s>`.
CPU time is user + system time of the command and its threads (what a loaded machine
changes least).
Peak RSS is the kernel's VmHWM (it includes pages of a mapped input file); peak anonymous
RSS is the largest RssAnon seen when polling /proc/PID/status every 10 ms (memory the
program allocated, without file-backed pages), which is what the memory target measures.
The command's stdout goes to /dev/null, its stderr passes through.
"""
import resource
import subprocess
import sys
import threading
import time


def field(pid, name):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def main():
    cmd = sys.argv[sys.argv.index("--") + 1:]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    # /dev/null opened write-only: taskchain takes a read-write /dev/null on fd 1 for a
    # closed standard output (what a launcher leaves there) and refuses to run.
    sink = open("/dev/null", "wb")
    p = subprocess.Popen(cmd, stdout=sink)
    # The end is taken by a thread waiting on the command, so the wall time is not
    # rounded up to the 10 ms polling step (it matters for runs of tens of ms).
    done = threading.Event()
    end = []

    def wait():
        p.wait()
        end.append(time.perf_counter())
        done.set()

    waiter = threading.Thread(target=wait)
    waiter.start()
    peak_anon = peak_rss = 0
    while not done.is_set():
        a, r = field(p.pid, "RssAnon"), field(p.pid, "VmHWM")
        peak_anon = max(peak_anon, a or 0)
        peak_rss = max(peak_rss, r or 0)
        done.wait(0.01)
    waiter.join()
    wall = end[0] - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(
        f"wall_s={wall:.3f} peak_rss_kb={peak_rss} peak_anon_kb={peak_anon} "
        f"exit={p.returncode} cpu_s={cpu:.3f}"
    )


if __name__ == "__main__":
    main()
