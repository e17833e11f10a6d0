#!/usr/bin/env python3
"""The CI recipes (examples/ci/*.yml, Dockerfile) and the entry script's set-up plan, checked
without a GitHub runner or a Docker engine (neither exists on the lab's machines).

What can be checked here is: the workflows parse (python3-yaml); every locklab command a
step runs exists (the binary's usage, or the script's own `setup` and `test`) and the
binary accepts the `matrix` and `hunt` flags given; the cache keys name locklab's revision
and its package plan (`locklab setup --plan`); caches are restored before the first
locklab command, with the paths the set-up job saved; the sources' times are fixed before
the cache; the Dockerfile sets up from the script and the example drivers alone, before the
source is copied, and the plan from those files equals the whole tree's; the script's lock
table covers every backend of `locklab list --json` and the matrix's example drivers.
Mutations of each recipe show that each check can fail.

    LOCKLAB_BINARY=build/locklab python3 tests/ci_recipes_test.py
"""
import copy
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.environ.get("LOCKLAB_BINARY", os.path.join(ROOT, "build", "locklab"))
SCRIPT = os.path.join(ROOT, "locklab")
GUARD = os.path.join(ROOT, "examples/ci/guard-my-lock.yml")
SHARDED = os.path.join(ROOT, "examples/ci/sharded-matrix.yml")
EXAMPLE_DRIVER = "driver:examples/drivers/redis_py_lock.py"  # stands in for a team's driver

# `locklab` or `.locklab/locklab` or `./locklab` or `/opt/locklab/locklab` then its command.
LOCKLAB_CALL = re.compile(r"(?:^|[\s;&|(])((?:\.{0,2}/)?(?:[\w.-]+/)*locklab) +([a-z][\w-]*)((?: +[^\n;&|)]*)?)")


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def binary_commands():
    usage = subprocess.run([BINARY, "--help"], capture_output=True, text=True).stdout
    # "  locklab CMD ..." lines, or a "commands:" section of "  CMD  what it does" lines.
    cmds = set(re.findall(r"^\s+locklab ([a-z][\w-]*)", usage, re.M))
    if "commands:" in usage:
        cmds |= set(re.findall(r"^  ([a-z][\w-]*)  ", usage.split("commands:", 1)[1], re.M))
    return cmds | {"setup", "test"}  # the entry script's own


def plan(*args, cwd=ROOT, script=SCRIPT, env=None):
    r = subprocess.run([script, "setup", "--plan"] + list(args), capture_output=True, text=True,
                       cwd=cwd, env=env)
    assert r.returncode == 0, r.stderr
    sets = {}
    for line in r.stdout.splitlines():
        m = re.match(r"set ([\w-]+): (.*) \((.*)\)$", line)
        if m:
            sets[m.group(1)] = m.group(2).split()
    return sets, r.stdout


def steps_of(job):
    return job.get("steps", [])


def expand(text, env):
    """The workflow's env and the test's stand-ins for ${{ }} expressions."""
    text = re.sub(r"\$\{\{\s*matrix\.shard\s*\}\}", "1", text)
    text = re.sub(r"\$\{\{\s*env\.(\w+)\s*\}\}", lambda m: str(env.get(m.group(1), "7")), text)
    text = re.sub(r"\$\{\{[^}]*\}\}", "7", text)  # a run id, a key: any word
    for k, v in env.items():
        v = re.sub(r"\$\{\{[^}]*\}\}", "7", v)
        text = text.replace('"$' + k + '"', shlex.quote(str(v))).replace("$" + k, str(v))
    return text


def locklab_calls(wf):
    """(job, step index, command, args words) of every locklab call in run steps."""
    env = {k: str(v) for k, v in (wf.get("env") or {}).items()}
    env["DRIVER"] = EXAMPLE_DRIVER  # the team's driver is not here: an example stands in
    out = []
    for jname, job in wf["jobs"].items():
        for i, step in enumerate(steps_of(job)):
            run = step.get("run", "")
            for m in LOCKLAB_CALL.finditer(run):
                words = shlex.split(expand(m.group(3), env), comments=True)
                out.append((jname, i, m.group(2), words))
    return out


def first_locklab_step(job):
    for i, step in enumerate(steps_of(job)):
        if LOCKLAB_CALL.search(step.get("run", "")):
            return i
    return None


def cache_steps(job):
    return [(i, s) for i, s in enumerate(steps_of(job)) if str(s.get("uses", "")).startswith("actions/cache")]


def time_fix_step(job, wf_env):
    for i, step in enumerate(steps_of(job)):
        run = expand(step.get("run", ""), {k: str(v) for k, v in (wf_env or {}).items()})
        if "touch" in run and "-d" in run and "find" in run:
            return i
    return None


def workflow_problems(wf):
    """Every way a workflow breaks the recipe's rules, one line each."""
    out = []
    known = binary_commands()
    wf_env = wf.get("env") or {}
    for jname, i, cmd, words in locklab_calls(wf):
        if cmd not in known:
            out.append(f"{jname} step {i}: locklab {cmd} is not a locklab command")
    keys = {}
    for jname, job in wf["jobs"].items():
        caches = cache_steps(job)
        first = first_locklab_step(job)
        if not caches:
            out.append(f"{jname}: no cache step: set-up is done from nothing")
            continue
        fix = time_fix_step(job, wf_env)
        for i, step in caches:
            w = step.get("with") or {}
            # The set-up's entry is the one that keeps the build (a compiler cache beside it is
            # not checked as one).
            if jname not in keys or "build" in str(w.get("path", "")):
                keys[jname] = (step["uses"], w.get("key", ""), w.get("path", ""))
            if fix is None or fix > i:
                out.append(f"{jname}: the sources' times are not fixed before the cache step")
            # Restoring after a locklab command (but `setup --plan`, which only reads) is too late.
            for j, s in enumerate(steps_of(job)):
                run = s.get("run", "")
                if j < i and LOCKLAB_CALL.search(run) and not all(
                        "--plan" in m.group(3) for m in LOCKLAB_CALL.finditer(run)):
                    out.append(f"{jname}: step {j} runs locklab before the cache is restored")
            if first is None:
                out.append(f"{jname}: no locklab command")
    # Keys: the set-up job's key is computed from locklab's revision and the plan; restoring
    # jobs use exactly that key and the same paths (the paths are part of the entry).
    savers = {j: k for j, k in keys.items() if not k[0].startswith("actions/cache/restore")}
    for j, (uses, key, path) in savers.items():
        job = wf["jobs"][j]
        m = re.fullmatch(r"\$\{\{\s*steps\.(\w+)\.outputs\.(\w+)\s*\}\}", key.strip())
        text = key
        if m:
            text = "\n".join(s.get("run", "") for s in steps_of(job) if s.get("id") == m.group(1))
        if not re.search(r"rev-parse|github\.sha", text):
            out.append(f"{j}: the cache key does not name locklab's revision")
        if "--plan" not in text:
            out.append(f"{j}: the cache key does not name the package plan (locklab setup --plan)")
        p = expand(str(path), {k: str(v) for k, v in wf_env.items()})
        for want in (".lab", "build", "/var/cache/apt/archives"):
            if want not in p:
                out.append(f"{j}: the cache does not keep {want}")
    for j, (uses, key, path) in keys.items():
        if j in savers:
            continue
        job = wf["jobs"][j]
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        m = re.fullmatch(r"\$\{\{\s*needs\.(\w+)\.outputs\.(\w+)\s*\}\}", key.strip())
        if not m or m.group(1) not in savers or m.group(1) not in needs:
            out.append(f"{j}: restores a key that is not its set-up job's ({key})")
        elif path != savers[m.group(1)][2]:
            out.append(f"{j}: restores other paths than {m.group(1)} saved")
        step = next(s for _, s in cache_steps(job))
        if not (step.get("with") or {}).get("fail-on-cache-miss"):
            out.append(f"{j}: a cache miss would set up from nothing (fail-on-cache-miss)")
    return out


def dockerfile_instructions(text):
    joined = re.sub(r"\\\n", " ", text)
    return [(l.split(None, 1)[0].upper(), l.split(None, 1)[1] if len(l.split(None, 1)) > 1 else "")
            for l in joined.splitlines() if l.strip() and not l.lstrip().startswith("#")]


def dockerfile_problems(text):
    out = []
    ins = dockerfile_instructions(text)
    copies = [(i, a) for i, (op, a) in enumerate(ins) if op == "COPY"]
    source = [i for i, a in copies if a.split()[0] == "."]
    if not source:
        return ["the source is never copied (COPY . .)"]
    src = source[0]
    setup_layer = [i for i, (op, a) in enumerate(ins) if op == "RUN" and "locklab setup --no-build" in a]
    if not setup_layer or setup_layer[0] > src:
        out.append("no set-up layer (locklab setup --no-build) before the source is copied")
    build = [i for i, (op, a) in enumerate(ins) if op == "RUN" and re.search(r"locklab setup(?! --no-build)", a)]
    if not build or build[-1] < src:
        out.append("the build (locklab setup) does not follow the source")
    for i, a in copies:
        if i < src and a.split()[0] not in ("locklab", "examples/drivers/"):
            out.append(f"COPY {a} before the set-up layer: a change there would redo the packages")
    entry = [a for op, a in ins if op == "ENTRYPOINT"]
    if not entry or json.loads(entry[-1]) != ["/opt/locklab/locklab"]:
        out.append("ENTRYPOINT is not the entry script")
    return out


class Workflows(unittest.TestCase):
    def test_guard_my_lock(self):
        wf = load(GUARD)
        self.assertEqual(workflow_problems(wf), [])
        cmds = [c for _, _, c, _ in locklab_calls(wf)]
        for c in ("setup", "hunt", "replay", "matrix"):
            self.assertIn(c, cmds)
        steps = steps_of(wf["jobs"]["guard"])
        self.assertTrue(any("junit" in str(s.get("uses", "")) for s in steps), "JUnit published")
        matrix = next(w for _, _, c, w in locklab_calls(wf) if c == "matrix" and "--expect" in w)
        self.assertIn("--lock", matrix)

    def test_sharded_matrix(self):
        wf = load(SHARDED)
        self.assertEqual(workflow_problems(wf), [])
        # One set-up: only the setup job runs `locklab setup`; shards need it.
        setups = {j for j, _, c, w in locklab_calls(wf) if c == "setup" and "--plan" not in w}
        self.assertEqual(setups, {"setup"})
        self.assertIn("setup", wf["jobs"]["shard"]["needs"])

    def test_flags_are_the_binarys(self):
        # Flags are parsed before locks are looked up: an unknown lock proves they parsed.
        checked = 0
        with tempfile.TemporaryDirectory() as d:
            for wf in (load(GUARD), load(SHARDED)):
                for _, _, cmd, words in locklab_calls(wf):
                    if cmd == "replay":
                        # Its flags (--out DIR, --jobs N) are read before the corpus: a corpus
                        # that is not there is then 65 naming it, an unknown flag 64.
                        args = ["/nonexistent/corpus" if not w.startswith("--") and
                                (i == 0 or not words[i - 1].startswith("--")) else
                                d if i > 0 and words[i - 1] == "--out" else w
                                for i, w in enumerate(words)]
                        r = subprocess.run([BINARY, cmd] + args, capture_output=True, text=True, cwd=ROOT)
                        self.assertEqual(r.returncode, 65, f"{cmd} {args}: {r.stderr}")
                        self.assertIn("/nonexistent/corpus", r.stderr)
                        checked += 1
                        continue
                    if cmd not in ("matrix", "hunt"):
                        continue
                    words = [w for w in words]
                    for flag in ("--out",):
                        if flag in words:
                            words[words.index(flag) + 1] = d
                    if "--expect" in words:  # the team's file is not here; the format is matrix_plan.h's
                        i = words.index("--expect")
                        del words[i:i + 2]
                    if cmd == "matrix":
                        args = words + ["--locks", "no-such-lock"]
                    else:
                        args = [w if w != EXAMPLE_DRIVER else "no-such-lock" for w in words]
                    r = subprocess.run([BINARY, cmd] + args, capture_output=True, text=True, cwd=ROOT)
                    self.assertEqual(r.returncode, 64, f"{cmd} {args}: {r.stderr}")
                    self.assertIn("no-such-lock", r.stderr, f"{cmd} {args}")
                    checked += 1
        self.assertEqual(checked, 5)  # guard: hunt, 2 replays, matrix; sharded: the shard's matrix

    def test_mutations_are_caught(self):
        guard, sharded = load(GUARD), load(SHARDED)

        def step(wf, job, pred):
            return next(s for s in wf["jobs"][job]["steps"] if pred(s))

        mutations = {
            "an unknown command": (guard, lambda w: step(w, "guard", lambda s: "hunt --lock" in s.get("run", ""))
                                   .__setitem__("run", ".locklab/locklab hunnt --lock x")),
            "a key without the revision": (guard, lambda w: step(w, "guard", lambda s: s.get("id") == "key")
                                           .__setitem__("run", 'echo "key=locklab-$(.locklab/locklab setup --plan hunt)" >> "$GITHUB_OUTPUT"')),
            "a key without the plan": (guard, lambda w: step(w, "guard", lambda s: s.get("id") == "key")
                                       .__setitem__("run", 'echo "key=$(git -C .locklab rev-parse HEAD)" >> "$GITHUB_OUTPUT"; find . -type f | xargs touch -d 2000-01-01')),
            "the cache after the set-up": (guard, lambda w: w["jobs"]["guard"]["steps"].append(
                w["jobs"]["guard"]["steps"].pop(next(i for i, s in enumerate(w["jobs"]["guard"]["steps"])
                                                     if str(s.get("uses", "")).startswith("actions/cache"))))),
            "no cache": (guard, lambda w: w["jobs"]["guard"].__setitem__("steps", [
                s for s in w["jobs"]["guard"]["steps"] if not str(s.get("uses", "")).startswith("actions/cache")])),
            "no apt archives cached": (guard, lambda w: step(w, "guard", lambda s: str(s.get("uses", "")).startswith("actions/cache")
                                                           and "build" in str((s.get("with") or {}).get("path", "")))
                                       ["with"].__setitem__("path", ".locklab/.lab\n.locklab/build\n")),
            "a shard restoring another key": (sharded, lambda w: step(w, "shard", lambda s: str(s.get("uses", "")).startswith("actions/cache"))
                                              ["with"].__setitem__("key", "locklab-${{ github.sha }}")),
            "a shard restoring other paths": (sharded, lambda w: step(w, "shard", lambda s: str(s.get("uses", "")).startswith("actions/cache"))
                                              ["with"].__setitem__("path", "build")),
            "a shard setting up on a miss": (sharded, lambda w: step(w, "merge", lambda s: str(s.get("uses", "")).startswith("actions/cache"))
                                             ["with"].pop("fail-on-cache-miss")),
            "no fixed times in a shard": (sharded, lambda w: w["jobs"]["shard"].__setitem__("steps", [
                s for s in w["jobs"]["shard"]["steps"] if s.get("run") != 'eval "$FIX_TIMES"'])),
        }
        self.assertEqual(workflow_problems(guard) + workflow_problems(sharded), [])
        for what, (wf, mutate) in mutations.items():
            c = copy.deepcopy(wf)
            mutate(c)
            self.assertNotEqual(workflow_problems(c), [], what)


class Dockerfile(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(ROOT, "Dockerfile")) as f:
            self.text = f.read()

    def test_set_up_below_the_source(self):
        self.assertEqual(dockerfile_problems(self.text), [])
        with open(os.path.join(ROOT, ".dockerignore")) as f:
            ignored = f.read().split()
        for d in ("build/", ".lab", "runs/", "**/node_modules/"):
            self.assertIn(d, ignored)

    def test_the_set_up_layer_has_what_the_plan_reads(self):
        # The plan from the layer's files (the script and examples/drivers/) equals the
        # whole tree's, for the image's default LOCKLAB_FOR (a matrix: every lock).
        m = re.search(r"^ARG LOCKLAB_FOR=(.*)$", self.text, re.M)
        self.assertIsNotNone(m)
        for_words = shlex.split(m.group(1))
        with tempfile.TemporaryDirectory() as d:
            shutil.copy(SCRIPT, d)
            shutil.copytree(os.path.join(ROOT, "examples/drivers"), os.path.join(d, "examples/drivers"),
                            ignore=shutil.ignore_patterns("node_modules"))
            layer, _ = plan(*for_words, cwd=d, script=os.path.join(d, "locklab"))
        whole, _ = plan(*for_words)
        self.assertEqual(layer, whole)
        self.assertIn("java", whole)  # the example drivers were read

    def test_mutations_are_caught(self):
        mutations = {
            "source first": self.text.replace("COPY locklab ./", "COPY . .\nCOPY locklab ./", 1),
            "no set-up layer": re.sub(r"RUN [^\n]*setup --no-build[^\n]*(\n [^\n]*)*", "RUN true", self.text),
            "more before the set-up": self.text.replace("COPY locklab ./", "COPY locklab ./\nCOPY trial/ trial/", 1),
            "another entry point": self.text.replace('ENTRYPOINT ["/opt/locklab/locklab"]',
                                                     'ENTRYPOINT ["/opt/locklab/build/locklab"]'),
        }
        self.assertEqual(dockerfile_problems(self.text), [])
        for what, text in mutations.items():
            self.assertNotEqual(dockerfile_problems(text), [], what)


class Readme(unittest.TestCase):
    def test_quick_start_and_the_ci_paragraph(self):
        with open(os.path.join(ROOT, "README.md")) as f:
            text = f.read()
        quick = text.split("## Quick start", 1)[1].split("\n\n", 2)
        self.assertEqual(quick[1].split(), ["./locklab", "matrix", "./locklab", "test"])
        self.assertIn("examples/ci/guard-my-lock.yml", text)
        # The README's CI lines are the workflow's commands.
        steps = "\n".join(s.get("run", "") for s in steps_of(load(GUARD)["jobs"]["guard"]))
        for line in re.findall(r"^    (\.locklab/locklab .*)$", text, re.M):
            cmd = shlex.split(line)[1]
            self.assertIn(f".locklab/locklab {cmd}", steps, line)


class SetUpPlan(unittest.TestCase):
    """The entry script's lock table against the binary's locks and the matrix's drivers."""

    BACKEND_SET = {"mariadb": "mariadb", "postgres": "postgres", "etcd": "etcd", "zookeeper": "zookeeper"}

    def test_every_backend_of_the_binary(self):
        listing = json.loads(subprocess.run([BINARY, "list", "--json"], check=True,
                                            capture_output=True, text=True).stdout)
        for lock in listing["locks"]:
            if lock["id"].startswith("driver:"):
                continue
            sets, out = plan("run", "--lock", lock["id"])
            want = self.BACKEND_SET.get(lock["backend"])
            if want:
                self.assertIn(want, sets, f"{lock['id']} ({lock['backend']}): {out}")
            else:
                self.assertEqual(set(sets), {"base", "lab"}, f"{lock['id']}: {out}")

    def test_the_default_matrix_gets_every_lock_set(self):
        with open(os.path.join(ROOT, "harness/matrix/matrix_plan.cc")) as f:
            drivers = re.findall(r'"(driver:examples/[^"]+)"', f.read())
        self.assertGreaterEqual(len(drivers), 4)
        every, _ = plan("matrix")
        for d in drivers:
            sets, _ = plan("matrix", "--lock", d)
            self.assertTrue(set(sets) <= set(every), d)
        self.assertEqual(set(every), {"base", "lab", "mariadb", "postgres", "etcd", "zookeeper",
                                      "redis-py", "node", "kazoo", "java"})

    def test_drivers_and_scenarios(self):
        sets, out = plan("hunt", "--lock", EXAMPLE_DRIVER, "--budget", "1m")
        self.assertEqual(set(sets), {"base", "lab", "redis-py"})
        self.assertIn("npm: no\njava-drivers: no", out)  # the example drivers' npm ci and javac
        self.assertIn("npm: yes\njava-drivers: yes", plan("matrix")[1])
        self.assertEqual(set(plan("run", "--lock=driver:examples/drivers/kazoo_lock.py")[0]),
                         {"base", "lab", "kazoo", "zookeeper"})
        self.assertEqual(set(plan("matrix", "--locks", "set-nx-px-lua,db-row")[0]), {"base", "lab", "mariadb"})
        self.assertEqual(set(plan("hunt", "--lock", "mutant:plain-del", "--baseline", "pg-advisory")[0]),
                         {"base", "lab", "postgres"})
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "a.toml"), "w") as f:
                f.write('seed = 3\n[lock]\nid = "etcd-lease"  # a comment\nttl_ms = 500\n[workload]\nid = "x"\n')
            os.makedirs(os.path.join(d, "sub"))
            with open(os.path.join(d, "sub", "b.toml"), "w") as f:
                f.write("[lock]\nid = 'driver:examples/drivers/java/curator_lock'\n")
            self.assertEqual(set(plan("run", os.path.join(d, "a.toml"))[0]), {"base", "lab", "etcd"})
            self.assertEqual(set(plan("replay", d)[0]), {"base", "lab", "etcd", "java", "zookeeper"})
        env = dict(os.environ, LOCKLAB_NEEDS="zookeeper,node")
        self.assertEqual(set(plan("run", "--lock", "setnx", env=env)[0]), {"base", "lab", "zookeeper", "node"})
        self.assertEqual(set(plan("test")[0]) - set(plan("matrix")[0]), {"test"})

    def test_help_needs_no_set_up(self):
        # Without a build directory the script answers from its own usage, installing nothing.
        with tempfile.TemporaryDirectory() as d:
            shutil.copy(SCRIPT, d)
            for args, code in ((["--help"], 0), (["matrix", "--help"], 0), (["--version"], 0), ([], 64)):
                r = subprocess.run([os.path.join(d, "locklab")] + args, capture_output=True, text=True,
                                   timeout=10)
                self.assertEqual(r.returncode, code, (args, r.stderr))
                self.assertNotIn("locklab setup:", r.stderr, args)
                self.assertFalse(os.path.exists(os.path.join(d, ".lab")), args)
                self.assertFalse(os.path.exists(os.path.join(d, "build")), args)


if __name__ == "__main__":
    unittest.main(verbosity=2)
