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
sys.path.insert(0, HERE)
from broken_in_trials_driver import scenario_name  # noqa: E402  (the nearest `locklab run`'s scenario)


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
