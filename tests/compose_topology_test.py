#!/usr/bin/env python3
"""compose.yaml against the lab's own topology description (`locklab cluster topology --json`).

Docker engines cannot run on the lab's machines, so this checks what can be checked here:
compose.yaml parses (python3-yaml), and every service, port, volume, replica link, sentinel
setting and the harness command it names exist in the topology the C++ side exports, and
the other way round. It fails when the two drift apart; the mutation tests show that it does.
The example CI workflow and Kubernetes Job are parsed too, and their matrix flags are given
to the real binary, which must accept them.

    LOCKLAB_BINARY=build/locklab python3 tests/compose_topology_test.py
"""
import copy
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.environ.get("LOCKLAB_BINARY", os.path.join(ROOT, "build", "locklab"))


def topology():
    out = subprocess.run([BINARY, "cluster", "topology", "--json"], check=True,
                         capture_output=True, text=True).stdout
    import json
    return json.loads(out)


def load_compose(path=os.path.join(ROOT, "compose.yaml")):
    with open(path) as f:
        return yaml.safe_load(f)


def _command_text(service):
    cmd = service.get("command", [])
    return cmd if isinstance(cmd, str) else "\n".join(str(c) for c in cmd)


def _arg_after(cmd, flag):
    if isinstance(cmd, list) and flag in cmd and cmd.index(flag) + 1 < len(cmd):
        return cmd[cmd.index(flag) + 1]
    return None


def problems(compose, topo):
    """Every disagreement between compose.yaml and the topology, one line each."""
    out = []
    services = compose.get("services") or {}
    top = {s["name"]: s for s in topo["services"]}
    for name in services:
        if name not in top:
            out.append(f"compose service '{name}' is not in the lab's topology")
    for name in top:
        if name not in services:
            out.append(f"topology service '{name}' is missing from compose.yaml")
    declared = set((compose.get("volumes") or {}).keys())
    if declared != set(topo["volumes"]):
        out.append(f"compose volumes {sorted(declared)} != topology volumes {sorted(topo['volumes'])}")
    for name, svc in services.items():
        t = top.get(name)
        if t is None:
            continue
        # Volumes: named volumes mounted by the service = the topology's, each declared.
        mounted = [v.split(":")[0] for v in svc.get("volumes", [])]
        if sorted(mounted) != sorted(t.get("volumes", [])):
            out.append(f"{name}: volumes {mounted} != topology {t.get('volumes', [])}")
        for v in mounted:
            if v not in declared:
                out.append(f"{name}: volume '{v}' is not declared at the top level")
        cmd = svc.get("command", [])
        text = _command_text(svc)
        if "entrypoint" in t and svc.get("entrypoint") != t["entrypoint"]:
            out.append(f"{name}: entrypoint {svc.get('entrypoint')} != topology {t['entrypoint']}")
        # Programs of the image that come from this repository (Dockerfile: COPY . /opt/locklab).
        for word in svc.get("entrypoint") or []:
            if word.startswith("/opt/locklab/") and not word.startswith("/opt/locklab/.lab/"):
                path = os.path.join(ROOT, word[len("/opt/locklab/"):])
                if not os.access(path, os.X_OK):
                    out.append(f"{name}: entrypoint {word} is not an executable file of the repository")
        if "control_file" in t:
            # The node's control files are DIR/NAME* on the volume mounted at DIR.
            control_dir, node_name = t["control_file"].rsplit("/", 1)
            mounts = {v.split(":")[1] for v in svc.get("volumes", []) if ":" in v}
            if control_dir not in mounts or (svc.get("entrypoint") or [None])[-1] != node_name:
                out.append(f"{name}: control file {t['control_file']} not reachable (volume at {control_dir})")
        if svc.get("pid") != t.get("pid"):
            out.append(f"{name}: pid namespace {svc.get('pid')} != topology {t.get('pid')}")
        if "port" in t:
            port = str(t["port"])
            if [str(p) for p in svc.get("expose", [])] != [port]:
                out.append(f"{name}: expose {svc.get('expose')} != topology port {port}")
            if t["role"] == "sentinel":
                if not re.search(rf"^port {port}$", text, re.M):
                    out.append(f"{name}: sentinel config does not listen on {port}")
            elif _arg_after(cmd, "--port") != port:
                out.append(f"{name}: redis-server --port {_arg_after(cmd, '--port')} != {port}")
        if "replica_of" in t:
            master = top.get(t["replica_of"], {})
            if not isinstance(cmd, list) or "--replicaof" not in cmd or \
                    cmd[cmd.index("--replicaof") + 1:cmd.index("--replicaof") + 3] != \
                    [t["replica_of"], str(master.get("port"))]:
                out.append(f"{name}: not --replicaof {t['replica_of']} {master.get('port')}")
        if t["role"] == "sentinel":
            for line in t["sentinel_conf"].strip().splitlines():
                if line not in text.splitlines():
                    out.append(f"{name}: sentinel config lacks '{line}'")
        if "command" in t:
            if cmd != t["command"]:
                out.append(f"{name}: command {cmd} != topology {t['command']}")
            endpoints = _arg_after(cmd, "--endpoints") or ""
            for url in filter(None, endpoints.split(",")):
                m = re.fullmatch(r"redis://([^:]+):(\d+)", url)
                if not m or m.group(1) not in top or str(top[m.group(1)].get("port")) != m.group(2):
                    out.append(f"{name}: endpoint {url} is not a topology service and port")
        if "depends_on" in t:
            deps = svc.get("depends_on", {})
            deps = set(deps if isinstance(deps, list) else deps.keys())
            if deps != set(t["depends_on"]):
                out.append(f"{name}: depends_on {sorted(deps)} != topology {sorted(t['depends_on'])}")
    return out


class ComposeMatchesTopology(unittest.TestCase):
    def setUp(self):
        self.compose = load_compose()
        self.topo = topology()

    def test_compose_yaml_names_only_what_the_lab_has(self):
        self.assertEqual(problems(self.compose, self.topo), [])
        # The issue's topology: five Redlock nodes, a master with a replica and three
        # sentinels, the resource, the harness.
        roles = [s["role"] for s in self.topo["services"]]
        self.assertEqual(sum(r.startswith("lock-node") for r in roles), 5)
        self.assertEqual(roles.count("replica"), 1)
        self.assertEqual(roles.count("sentinel"), 3)
        self.assertEqual(roles.count("resource"), 1)

    def test_drift_is_caught(self):
        mutations = {
            "a service dropped": lambda c: c["services"].pop("n5"),
            "a port changed": lambda c: c["services"]["n2"].__setitem__("expose", ["6380"]),
            "a volume renamed": lambda c: c["services"]["resource"].__setitem__(
                "volumes", ["counter-data:/data"]),
            "the quorum changed": lambda c: c["services"]["s2"].__setitem__(
                "command", [_command_text(c["services"]["s2"]).replace("6379 2", "6379 3")]),
            "an unknown endpoint": lambda c: c["services"]["locklab"]["command"].__setitem__(
                2, "redis://n1:6379,redis://n9:6379"),
            "the replica re-pointed": lambda c: c["services"]["r1"].__setitem__(
                "command", ["--port", "6379", "--replicaof", "n2", "6379"]),
            "an extra service": lambda c: c["services"].__setitem__("n6", {"image": "redis"}),
            "a node without its clock": lambda c: c["services"]["n3"].__setitem__(
                "volumes", ["n3-data:/data"]),
            "a node in its own PID namespace": lambda c: c["services"]["n5"].pop("pid"),
            "plain redis on a lock node": lambda c: c["services"]["n4"].__setitem__(
                "entrypoint", ["/opt/locklab/.lab/redis/bin/redis-server"]),
        }
        for what, mutate in mutations.items():
            c = copy.deepcopy(self.compose)
            mutate(c)
            self.assertNotEqual(problems(c, self.topo), [], what)


class ShardExamplesUseRealFlags(unittest.TestCase):
    """The CI workflow and the Kubernetes Job pass flags the binary accepts."""

    def accepts(self, flags):
        # Flags are parsed before locks are looked up: an unknown lock proves they parsed.
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([BINARY, "matrix"] + flags + ["--locks", "no-such-lock", "--out", d],
                               capture_output=True, text=True, cwd=ROOT)
        self.assertEqual(r.returncode, 64, r.stderr)
        self.assertEqual(r.stderr, "locklab matrix: flag --locks: unknown lock 'no-such-lock'\n")

    def test_github_actions(self):
        with open(os.path.join(ROOT, "examples/ci/sharded-matrix.yml")) as f:
            wf = yaml.safe_load(f)
        shards = wf["jobs"]["shard"]["strategy"]["matrix"]["shard"]
        self.assertEqual(shards, list(range(1, int(wf["env"]["SHARDS"]) + 1)))
        run = next(s["run"] for s in wf["jobs"]["shard"]["steps"] if "--shard" in s.get("run", ""))
        run = run.replace("$MATRIX_FLAGS", wf["env"]["MATRIX_FLAGS"]).replace('"$SEED"', "7")
        run = run.replace('"${{ matrix.shard }}/$SHARDS"', f"1/{wf['env']['SHARDS']}")
        words = shlex.split(run)
        self.assertEqual(words[:2], ["./locklab", "matrix"])
        self.accepts(words[2:])
        merge = next(s["run"] for s in wf["jobs"]["merge"]["steps"] if "locklab merge" in s.get("run", ""))
        self.assertIn("--out", merge)

    def test_kubernetes_indexed_job(self):
        with open(os.path.join(ROOT, "examples/k8s/locklab-shards-job.yaml")) as f:
            docs = list(yaml.safe_load_all(f))
        job = next(d for d in docs if d["kind"] == "Job")
        self.assertEqual(job["spec"]["completionMode"], "Indexed")
        c = job["spec"]["template"]["spec"]["containers"][0]
        env = {e["name"]: e["value"] for e in c["env"]}
        self.assertEqual(int(env["SHARDS"]), job["spec"]["completions"])
        line = c["args"][0].replace('"$SEED"', env["SEED"])
        line = line.replace('"$((JOB_COMPLETION_INDEX + 1))/$SHARDS"', f"1/{env['SHARDS']}")
        line = line.replace('"/runs/shards/$JOB_COMPLETION_INDEX"', "/tmp/unused")
        words = shlex.split(line)
        self.assertEqual(words[:3], ["exec", "/opt/locklab/locklab", "matrix"])
        self.accepts(words[3:])


if __name__ == "__main__":
    unittest.main(verbosity=2)
