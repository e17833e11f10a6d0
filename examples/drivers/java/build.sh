#!/bin/bash
# Compiles the Java example drivers (examples/drivers/java/*.java) into build/java-drivers
# (java_env.sh), with the helper (LocklabDriver, LockUnderTest: package locklab) also as
# build/java-drivers/locklab-driver.jar, unless every class there is newer than every source: run by ./locklab setup
# and by the launchers when the classes are missing or stale. Exit 0 when built or up to date,
# 69 when javac is missing or fails (the reason on stderr). Concurrent callers take turns.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/java_env.sh"
stamp="$JAVA_DRIVERS_CLASSES/.built"
fresh() { [ -f "$stamp" ] && [ -z "$(find "$JAVA_DRIVERS_SRC" -name '*.java' -newer "$stamp" -print -quit)" ]; }
fresh && exit 0
command -v javac >/dev/null 2>&1 || { echo "java drivers: no javac (openjdk-17-jdk-headless)" >&2; exit 69; }
mkdir -p "$JAVA_DRIVERS_CLASSES"
exec 9>"$JAVA_DRIVERS_CLASSES/.lock"
flock 9
fresh && exit 0  # another caller built them while we waited
echo "java drivers: javac into $JAVA_DRIVERS_CLASSES" >&2
tmp=$(mktemp -d "$JAVA_DRIVERS_CLASSES/.javac-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/.started"  # sources changed after this are compiled again next time
if ! javac -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC -Xlint:all -Xlint:-path -Werror \
    -d "$tmp" -cp "$JAVA_DRIVERS_CP" "$JAVA_DRIVERS_SRC"/*.java >&2; then
  echo "java drivers: javac failed" >&2
  exit 69
fi
# The helper (package locklab) also as a jar, for a team's own driver outside this folder:
# javac -cp build/java-drivers/locklab-driver.jar MyLock.java (README.md).
(cd "$tmp" && jar cf locklab-driver.jar locklab) || { echo "java drivers: jar failed" >&2; exit 69; }
# The helper was in the default package before it had one: its old classes must not linger.
rm -f "$JAVA_DRIVERS_CLASSES"/LocklabDriver*.class "$JAVA_DRIVERS_CLASSES"/LockUnderTest.class
cp -r "$tmp"/*.class "$tmp"/locklab "$tmp"/locklab-driver.jar "$JAVA_DRIVERS_CLASSES"/
touch -r "$tmp/.started" "$stamp"
