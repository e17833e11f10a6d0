#!/usr/bin/python3
"""A lock driver for tests/chaos/hunt_test.cc whose first start in every run is too slow: in a
run whose scenario file is a first attempt (its name has no "-again"), it sleeps past any
start_timeout_ms before its hello, as a driver does on a machine too busy to start it; in a
run hunt started again (trials/t0003-again1.toml) it is redis-py's Lock, the example driver
examples/drivers/redis_py_lock.py. `--never` sleeps in every run: a driver that never starts
in a trial (it answers the hunt's probe of its hello, which runs under no trial).
The scenario is found by walking up the process tree to the nearest `locklab run`. Not a lock
to copy.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "drivers", "redis_py_lock.py")


def scenario_name():
    """The file name of the scenario the nearest `locklab run` ancestor runs, "" if none."""
    pid = os.getppid()
    for _ in range(8):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
            with open("/proc/%d/stat" % pid) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return ""
        if "run" in argv and argv.index("run") + 1 < len(argv):
            return os.path.basename(argv[argv.index("run") + 1])
        pid = ppid
    return ""


def main():
    never = "--never" in sys.argv[1:]
    name = scenario_name()
    # (The hunt's own probe of the hello runs under no `locklab run`: it always starts.)
    if name.endswith(".toml") and (never or "-again" not in name):
        time.sleep(120)  # the harness kills it at start_timeout_ms
        return
    os.execv(sys.executable, [sys.executable, EXAMPLE])


if __name__ == "__main__":
    main()
