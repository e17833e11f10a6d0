#!/bin/bash
# Compiles the C example drivers (examples/drivers/c/*.c) into build/c-drivers/ unless every
# binary there is newer than every source: run by the launchers (hiredis_lock, ...) on first
# use. Exit 0 when built or up to date, 69 when cc or a library is missing or the compile
# fails (the reason on stderr). Concurrent callers take turns.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${LOCKLAB_C_DRIVERS:-$(cd "$src/../../.." && pwd)/build/c-drivers}
stamp="$out/.built"
fresh() { [ -f "$stamp" ] && [ -z "$(find "$src" \( -name '*.c' -o -name '*.h' \) -newer "$stamp" -print -quit)" ]; }
fresh && exit 0
command -v cc >/dev/null 2>&1 || { echo "c drivers: no cc (build-essential)" >&2; exit 69; }
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
fresh && exit 0  # another caller built them while we waited
echo "c drivers: cc into $out" >&2
tmp=$(mktemp -d "$out/.cc-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/.started"  # sources changed after this are compiled again next time
flags=(-std=c11 -O2 -Wall -Wextra -Werror -Wno-format-truncation)  # details are cut on purpose
cc "${flags[@]}" -o "$tmp/hiredis_lock" "$src/hiredis_lock.c" "$src/locklab_driver.c" -lhiredis >&2 \
  || { echo "c drivers: hiredis_lock did not compile (libhiredis-dev)" >&2; exit 69; }
if [ -f "$src/pg_resource_lock.c" ]; then
  cc "${flags[@]}" -I"$(pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)" \
    -o "$tmp/pg_resource_lock" "$src/pg_resource_lock.c" "$src/locklab_driver.c" -lpq >&2 \
    || { echo "c drivers: pg_resource_lock did not compile (libpq-dev)" >&2; exit 69; }
fi
for f in "$tmp"/*; do [ -x "$f" ] && mv -f "$f" "$out/"; done
touch -r "$tmp/.started" "$stamp"
