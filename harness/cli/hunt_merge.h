// `locklab merge HUNT_SHARD_DIR... [--out DIR]`: one hunt from the hunt.json files of its
// `hunt --shard I/N` runs (each shard searched every Nth of one seed's draws, on its own
// machine).
//
// Every shard must be a hunt of the same lock, baseline and seed, split the same N ways, and
// every index 1..N must be there once; anything else is refused with one line naming the
// directory (exit 64). The merged hunt writes, in the run store (runs/hunt-<lock>-merged/
// <time>-<seed>/ under --out, default runs):
//   hunt.json  the shards' trials and untrusted violations summed, every find (with its shard
//              and its scenario's path in that shard), the earliest counted find's time, and
//              the story of one shard's minimal: the one that reproduced best (a kill before
//              a find that did not reproduce; among kills the most reruns failed, then the
//              earliest found); "merged_from" lists each shard's directory and what it found;
//   hunt.md    the same in a page, pointing to the told shard's own hunt.md;
//   minimal.toml and narrative.md: the told shard's.
// The shards' directories stay where they are.
//
// Exit code: 1 when a shard counted a failure (as `locklab hunt`), 0 when none did, 64 on
// bad flags or shards, 65 when a hunt.json cannot be read, 70 when a file cannot be written.
// Thread safety: reads and writes files; run from one thread.
#pragma once

#include <string>
#include <vector>

namespace locklab::harness {

// Whether `dir` holds a hunt's hunt.json (so `locklab merge` merges hunts, not matrices).
bool IsHuntDir(const std::string& dir);

int RunHuntMergeCommand(const std::vector<std::string>& args);

}  // namespace locklab::harness
