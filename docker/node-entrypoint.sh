#!/bin/sh
# A lock node for --endpoints with --endpoint-clocks (compose.yaml's n1..n5): the lab Redis
# under libfaketime, its clock offset read from CLOCKS/NAME ("+0", "+20s", "+0 x2.0") at
# every time call, so the harness steps this node's clock by writing that file (the lab's
# own ClockControlFile mechanism, across containers through a shared volume).
#
#   node-entrypoint.sh NAME [redis-server args...]
# Environment: LOCKLAB_CLOCKS_DIR (default /clocks), LOCKLAB_REDIS_SERVER (default the
# image's lab Redis), LOCKLAB_LIBFAKETIME (default Debian's libfaketime.so.1).
set -eu
name=$1
shift
clocks=${LOCKLAB_CLOCKS_DIR:-/clocks}
server=${LOCKLAB_REDIS_SERVER:-/opt/locklab/.lab/redis/bin/redis-server}
lib=${LOCKLAB_LIBFAKETIME:-$(ls /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 2>/dev/null | head -1)}
if [ -z "$lib" ]; then
  echo "node-entrypoint.sh: libfaketime not found (apt-get install libfaketime)" >&2
  exit 69
fi
mkdir -p "$clocks"
# A fresh clock: libfaketime needs the file to exist when the server starts.
printf '+0\n' > "$clocks/$name.tmp" && mv "$clocks/$name.tmp" "$clocks/$name"
LD_PRELOAD=$lib FAKETIME_TIMESTAMP_FILE=$clocks/$name FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1
export LD_PRELOAD FAKETIME_TIMESTAMP_FILE FAKETIME_NO_CACHE FAKETIME_DONT_FAKE_MONOTONIC
exec "$server" "$@"
