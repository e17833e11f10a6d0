// Lock mutants (`mutant:NAME`): deliberately broken variants of the reference Redis locks,
// each ONE small, plausible change to the reference code (a bug people ship), so that the
// lab's search (`locklab hunt`) can be scored: a mutant is killed when the lab finds a
// verdict for it that its reference lock (LockInfo::mutant_of) does not get in the same
// conditions. docs/mutants.md has the table: name, reference, the change, the fault that
// exposes it.
//
// A mutant is built from its reference lock's class with a mutation option set (for example
// SingleNodeMutation, RenewScript, RedlockOptions::quorum_off_by_one); those options are not
// knobs of the reference, which behaves exactly as before. A mutant accepts its reference's
// knobs, announces its reference's pause points plus its own (LockInfo::points), and applies
// to the same faults. Mutants are not in ListLocks() (the default matrix must not grow):
// FindLock and MakeLock reach them through FindMutant and MakeMutant.
//
// Thread safety: ListMutants and FindMutant build a static table once (thread-safe static
// initialisation) and return pointers into it, valid for the life of the process; the locks
// built are as thread-compatible as their references.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "locks/lock.h"

namespace locklab::locks {

// Every mutant, in the order of docs/mutants.md.
const std::vector<LockInfo>& ListMutants();

// Whether `id` names a mutant ("mutant:" prefix), known or not.
bool IsMutantId(const std::string& id);

// The mutant `id` ("mutant:NAME"), or nullptr.
const LockInfo* FindMutant(const std::string& id);

// Builds the mutant config.algorithm names. The caller (MakeLock) has already checked the
// knobs against the mutant's LockInfo, the nodes and the TTL.
Status MakeMutant(const LockConfig& config, std::unique_ptr<Lock>* out);

}  // namespace locklab::locks
