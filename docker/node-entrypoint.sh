#!/bin/sh
# A lock node the harness can fault from outside (compose.yaml's n1..n5, --endpoint-control):
# the lab Redis under libfaketime, supervised by this shell, controlled through files in a
# directory both share (a volume in compose):
#
#   CONTROL/NAME       libfaketime clock offset ("+0", "+20s", "+0 x2.0"), read at every
#                      time call: the harness steps the node's clock by writing it;
#   CONTROL/NAME.pid   redis-server's pid: the harness pauses it (SIGSTOP/SIGCONT) and kills
#                      it (SIGKILL), so harness and node must share a PID namespace (compose:
#                      pid: "service:n1");
#   CONTROL/NAME.down  while it exists, a killed server stays down; when it goes, this shell
#                      starts the server again with the same arguments (restart fault).
#
#   node-entrypoint.sh NAME [redis-server args...]
# Environment: LOCKLAB_CONTROL_DIR (default /control), LOCKLAB_REDIS_SERVER (default the
# image's lab Redis), LOCKLAB_LIBFAKETIME (default Debian's libfaketime.so.1).
set -eu
name=$1
shift
control=${LOCKLAB_CONTROL_DIR:-/control}
server=${LOCKLAB_REDIS_SERVER:-/opt/locklab/.lab/redis/bin/redis-server}
lib=${LOCKLAB_LIBFAKETIME:-$(ls /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 2>/dev/null | head -1)}
if [ -z "$lib" ]; then
  echo "node-entrypoint.sh: libfaketime not found (apt-get install libfaketime)" >&2
  exit 69
fi
mkdir -p "$control"
# A fresh clock (libfaketime needs the file when the server starts), nothing held down.
printf '+0\n' > "$control/$name.tmp" && mv "$control/$name.tmp" "$control/$name"
rm -f "$control/$name.down" "$control/$name.pid"
LD_PRELOAD=$lib FAKETIME_TIMESTAMP_FILE=$control/$name FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1
export FAKETIME_TIMESTAMP_FILE FAKETIME_NO_CACHE FAKETIME_DONT_FAKE_MONOTONIC

child=
stop() {
  [ -n "$child" ] && kill -CONT "$child" 2>/dev/null; [ -n "$child" ] && kill -TERM "$child" 2>/dev/null
  rm -f "$control/$name.pid"
  exit 0
}
trap stop TERM INT
while :; do
  LD_PRELOAD=$lib "$server" "$@" &
  child=$!
  printf '%s\n' "$child" > "$control/$name.pid.tmp" && mv "$control/$name.pid.tmp" "$control/$name.pid"
  # `wait` returns when the server dies (or a trapped signal arrives).
  wait "$child" || true
  rm -f "$control/$name.pid"
  child=
  while [ -e "$control/$name.down" ]; do sleep 0.02; done
done
