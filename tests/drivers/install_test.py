#!/usr/bin/python3
"""The driver helpers install the way docs/driver-protocol.md says, offline, and a driver
outside this repository then says its hello through them:

  Python  pip install --no-index --no-build-isolation examples/drivers/python into a venv
          (--system-site-packages: Debian's setuptools and wheel), `import locklab_driver`;
  Node    npm install --offline examples/drivers/node into a fresh project,
          `require('locklab-driver')`;
  Java    examples/drivers/java/build.sh makes locklab-driver.jar; a driver in a package of its
          own compiles against it and runs with it on the classpath.

No server: each driver only says hello and answers one request. A tool that is missing
(python3-venv, npm, javac) skips its case with the reason.
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DRIVERS = os.path.join(REPO, "examples", "drivers")
REQUEST = json.dumps({"id": 7, "op": "frobnicate", "key": "k", "timeout_ms": 1000}) + "\n"


def talk(argv, cwd):
    """The driver's hello and its answer to one request (an unknown op: fail)."""
    p = subprocess.run(argv, input=REQUEST, capture_output=True, text=True, timeout=120, cwd=cwd,
                       env=dict(os.environ, LOCKLAB_NODES="127.0.0.1:1"))
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    return p.returncode, lines, p.stderr


class InstallTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="locklab-install-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def check_session(self, rc, lines, err, name):
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(lines), 2, lines)
        self.assertEqual(lines[0]["hello"], "locklab-driver")
        self.assertEqual(lines[0]["name"], name)
        self.assertEqual((lines[1]["id"], lines[1]["outcome"]), (7, "fail"), lines[1])

    def test_python_package(self):
        venv = os.path.join(self.dir, "venv")
        made = subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv],
                              capture_output=True, text=True)
        if made.returncode != 0:
            self.skipTest("no venv (python3-venv): " + made.stderr.strip()[-200:])
        pip = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--no-index",
                              "--no-build-isolation", os.path.join(DRIVERS, "python")],
                             capture_output=True, text=True, timeout=300, cwd=self.dir)
        self.assertEqual(pip.returncode, 0, pip.stdout + pip.stderr)
        driver = os.path.join(self.dir, "driver.py")
        with open(driver, "w") as f:
            f.write("#!%s\nimport locklab_driver as ld\n"
                    "ld.run('installed py', lambda r: None, lambda r: None,\n"
                    "       read=lambda r: {'outcome': 'ok', 'value': 3}, work=lambda r: None)\n"
                    % os.path.join(venv, "bin", "python"))
        os.chmod(driver, 0o755)
        rc, lines, err = talk([driver], self.dir)
        self.check_session(rc, lines, err, "installed py")
        self.assertIs(lines[0].get("resource"), True, "read and work make the hello's resource")
        # Installed, not found beside the driver: it lives in the venv.
        where = subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                                "import locklab_driver; print(locklab_driver.__file__)"],
                               capture_output=True, text=True, cwd=self.dir)
        self.assertIn(venv, where.stdout)

    def test_node_package(self):
        if shutil.which("npm") is None or shutil.which("node") is None:
            self.skipTest("no npm / node")
        project = os.path.join(self.dir, "project")
        os.makedirs(project)
        with open(os.path.join(project, "package.json"), "w") as f:
            json.dump({"name": "my-lock-driver", "version": "1.0.0", "private": True}, f)
        npm = subprocess.run(["npm", "install", "--offline", "--no-audit", "--no-fund",
                              os.path.join(DRIVERS, "node")],
                             capture_output=True, text=True, timeout=300, cwd=project)
        self.assertEqual(npm.returncode, 0, npm.stdout + npm.stderr)
        driver = os.path.join(project, "driver.js")
        with open(driver, "w") as f:
            f.write("const ld = require('locklab-driver');\n"
                    "ld.run({name: 'installed js', acquire: async () => ({}), release: async () => ({}),\n"
                    "        read: async () => ({outcome: 'ok', value: 3}), work: async () => ({})});\n")
        rc, lines, err = talk(["node", driver], project)
        self.check_session(rc, lines, err, "installed js")
        self.assertIs(lines[0].get("resource"), True, "read and work make the hello's resource")

    def test_java_jar(self):
        if shutil.which("javac") is None or shutil.which("jar") is None:
            self.skipTest("no javac / jar (openjdk-17-jdk-headless)")
        classes = os.path.join(self.dir, "java-drivers")
        build = subprocess.run([os.path.join(DRIVERS, "java", "build.sh")], capture_output=True, text=True,
                               timeout=600, env=dict(os.environ, LOCKLAB_JAVA_CLASSES=classes))
        self.assertEqual(build.returncode, 0, build.stderr)
        jar = os.path.join(classes, "locklab-driver.jar")
        self.assertTrue(os.path.exists(jar), os.listdir(classes))
        src = os.path.join(self.dir, "src", "com", "example")
        os.makedirs(src)
        with open(os.path.join(src, "MyLock.java"), "w") as f:
            f.write("package com.example;\n"
                    "import locklab.LockUnderTest;\nimport locklab.LocklabDriver;\n"
                    "public final class MyLock implements LockUnderTest {\n"
                    "  public String name() { return \"installed java\"; }\n"
                    "  public LocklabDriver.Answer acquire(LocklabDriver.Request r) { return LocklabDriver.Answer.fail(\"no\"); }\n"
                    "  public LocklabDriver.Answer release(LocklabDriver.Request r) { return LocklabDriver.Answer.fail(\"no\"); }\n"
                    "  public static void main(String[] a) { LocklabDriver.run(new MyLock()); }\n"
                    "}\n")
        out = os.path.join(self.dir, "out")
        javac = subprocess.run(["javac", "-cp", jar, "-d", out, os.path.join(src, "MyLock.java")],
                               capture_output=True, text=True, timeout=300)
        self.assertEqual(javac.returncode, 0, javac.stderr)
        self.check_session(*talk(["java", "-cp", jar + ":" + out, "com.example.MyLock"], self.dir),
                           "installed java")


if __name__ == "__main__":
    unittest.main()
