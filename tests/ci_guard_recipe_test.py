#!/usr/bin/python3
"""examples/ci/guard-my-lock.yml, run as a team's CI would run it, in a scratch copy of a
team's repository: green on day one, red only on a change that breaks the lock.

The team's repository (a git repository, as the recipe's checkout gives): the redis-py example
driver and its helper copied to ci/locklab/, an empty corpus (ci/locklab/corpus/.gitkeep, since
git keeps no empty folder) and ci/locklab/expect.toml written once by `matrix --write-expect`,
as the recipe's header says. Then the recipe's locklab steps (every step after set-up whose
command is `.locklab/locklab ...`), in order, each as its `run:` line with the workflow's env
(HUNT_BUDGET shortened so that the suite can afford it), `.locklab/locklab` standing for the
binary under test:

  day one   every step exits 0: the hunt's finds are the ones the expectation file already
            pins (--known), the empty corpus replays as 0 scenarios, the matrix agrees;
  day two   the driver's acquire first deletes the key (a "stale lock clean-up" that steals
            the lock): the job fails, the hunt with a new failure under no fault and the matrix
            with the none cell expected S, got V, each naming it.

Needs the binary (LOCKLAB_BINARY), a lab Redis build, python3-redis and python3-yaml.
"""
import os
import shutil
import subprocess
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BINARY = os.environ.get("LOCKLAB_BINARY", os.path.join(REPO, "build", "locklab"))
RECIPE = os.path.join(REPO, "examples", "ci", "guard-my-lock.yml")
HUNT_BUDGET = "30s"  # the workflow's 3m, cut for the suite (the hunt ends within its budget)


def recipe_steps():
    """The workflow's env and its locklab steps after set-up: [(name, command)]."""
    with open(RECIPE, encoding="utf-8") as f:
        wf = yaml.safe_load(f)
    steps = []
    for job in wf["jobs"].values():
        seen_setup = False
        for step in job["steps"]:
            run = step.get("run", "")
            if run.startswith(".locklab/locklab setup"):
                seen_setup = True
                continue
            if seen_setup and run.startswith(".locklab/locklab "):
                steps.append((step.get("name", run), run.strip()))
    return {k: str(v) for k, v in wf["env"].items()}, steps


class GuardRecipeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="locklab-guard-")
        self.team = os.path.join(self.tmp, "team")
        ci = os.path.join(self.team, "ci", "locklab")
        os.makedirs(os.path.join(ci, "corpus"))
        open(os.path.join(ci, "corpus", ".gitkeep"), "w").close()
        for name in ("redis_py_lock.py", "locklab_driver.py"):
            shutil.copy(os.path.join(REPO, "examples", "drivers", name), ci)
        os.rename(os.path.join(ci, "redis_py_lock.py"), os.path.join(ci, "driver.py"))
        subprocess.run(["git", "init", "-q", self.team], check=True)
        # .locklab/locklab: the binary under test, as the recipe's second checkout gives it.
        os.makedirs(os.path.join(self.team, ".locklab"))
        os.symlink(BINARY, os.path.join(self.team, ".locklab", "locklab"))
        os.symlink(os.path.join(REPO, "scenarios"), os.path.join(self.team, ".locklab", "scenarios"))
        self.env, self.steps = recipe_steps()

    def tearDown(self):
        if not os.environ.get("LOCKLAB_KEEP"):  # LOCKLAB_KEEP=1 keeps the team's copy to look at
            shutil.rmtree(self.tmp, ignore_errors=True)

    def sh(self, command, env=None):
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.run(["bash", "-c", command], cwd=self.team, env=e, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=900)
        return p.returncode, p.stdout

    def run_recipe(self, day):
        env = dict(self.env, HUNT_BUDGET=HUNT_BUDGET)
        results = []
        for name, command in self.steps:
            # Each day's outputs apart (the recipe writes to locklab-out/, fresh on each runner).
            command = command.replace("locklab-out/", "locklab-out-%s/" % day)
            code, out = self.sh(command, env)
            results.append((name, code, out))
        return results

    def test_green_on_day_one_and_red_on_a_regression(self):
        self.assertTrue(self.steps, "no locklab step found in " + RECIPE)
        commands = " ".join(c for _, c in self.steps)
        for needed in (" hunt ", " replay ", " matrix ", "--known", "--expect"):
            self.assertIn(needed, commands)
        # Day zero: the team writes its expectation file once, as the recipe's header says.
        code, out = self.sh(".locklab/locklab matrix --lock driver:ci/locklab/driver.py --no-report "
                            "--write-expect ci/locklab/expect.toml --out locklab-out-zero")
        self.assertEqual(code, 0, out)
        with open(os.path.join(self.team, "ci", "locklab", "expect.toml"), encoding="utf-8") as f:
            expect = f.read()
        self.assertIn('lock = "driver:ci/locklab/driver.py"', expect)
        self.assertRegex(expect, r'fault = "none"\nverdict = "S"')

        day_one = self.run_recipe("one")
        for name, code, out in day_one:
            self.assertEqual(code, 0, "day one, step '%s' exited %d:\n%s" % (name, code, out[-4000:]))
        # The empty corpus replayed as nothing, in one line.
        ours = [out for name, _, out in day_one if "ci/locklab/corpus" in out and "replay" in name]
        self.assertTrue(ours and "replay: 0 scenarios" in ours[0], day_one)

        # Day two: a regression in the acquire.
        path = os.path.join(self.team, "ci", "locklab", "driver.py")
        with open(path, encoding="utf-8") as f:
            src = f.read()
        planted = src.replace("            sent = time.monotonic()\n            try:\n                if lock.acquire(",
                              "            sent = time.monotonic()\n            r.delete(req[\"key\"])  # clean up a stale lock\n"
                              "            try:\n                if lock.acquire(", 1)
        self.assertNotEqual(planted, src, "the acquire of redis_py_lock.py changed: plant the regression anew")
        with open(path, "w", encoding="utf-8") as f:
            f.write(planted)
        results = self.run_recipe("two")
        codes = {name: code for name, code, _ in results}
        self.assertTrue(any(c == 1 for c in codes.values()), "day two should fail: %s" % codes)
        self.assertTrue(all(c in (0, 1) for c in codes.values()), "no step may be undecided or broken: %s" % codes)
        text = "\n".join(out for _, _, out in results)
        matrix = [out for name, _, out in results if "matrix" in name]
        self.assertTrue(matrix)
        self.assertRegex(matrix[0], r"driver:ci/locklab/driver\.py x none: expected S, got V",
                         "the matrix names the regressed cell:\n" + matrix[0][-3000:])
        hunt = [(code, out) for name, code, out in results if name == "hunt"]
        self.assertTrue(hunt)
        self.assertEqual(hunt[0][0], 1, hunt[0][1][-3000:])
        self.assertRegex(hunt[0][1], r"[1-9]\d* new failing scenarios? found", hunt[0][1][-3000:])
        self.assertNotIn("Traceback", text)


if __name__ == "__main__":
    unittest.main()
