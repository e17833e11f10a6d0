// LockInfo's typed fields against the registry: every lock's backend reads back through the
// Backend name table (locks/backend.h), and uses_lab_ttl is false exactly for the locks that
// keep their own lifetime (their descriptions say "--ttl is not used").
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "locks/backend.h"
#include "locks/driver_lock.h"
#include "locks/driver_protocol.h"
#include "locks/lock.h"
#include "locks/mutants.h"

namespace locklab::locks {
namespace {

TEST(Backend, EveryBackendHasOneWordThatParsesBack) {
  std::set<std::string> words;
  for (Backend b : AllBackends()) {
    const std::string& name = BackendName(b);
    EXPECT_TRUE(words.insert(name).second) << name << " names two backends";
    ASSERT_TRUE(ParseBackend(name).has_value()) << name;
    EXPECT_EQ(*ParseBackend(name), b) << name;
  }
  EXPECT_EQ(AllBackends().size(), 5u);
  EXPECT_EQ(BackendName(Backend::kRedis), "redis");
  EXPECT_EQ(BackendName(Backend::kMariadb), "mariadb");
  EXPECT_EQ(BackendName(Backend::kPostgres), "postgres");
  EXPECT_EQ(BackendName(Backend::kEtcd), "etcd");
  EXPECT_EQ(BackendName(Backend::kZookeeper), "zookeeper");
}

TEST(Backend, ParseRefusesOtherText) {
  for (const char* text : {"", "Redis", "REDIS", " redis", "redis ", "mongodb", "mysql", "zk"}) {
    EXPECT_FALSE(ParseBackend(text).has_value()) << "'" << text << "'";
  }
}

TEST(Backend, AHelloMayAskForEveryBackendInTheTablesOrder) {
  std::vector<std::string> names;
  for (Backend b : AllBackends()) names.push_back(BackendName(b));
  EXPECT_EQ(DriverBackends(), names);
  EXPECT_EQ(names.front(), "redis") << "the default first, as the refusal lists it";
}

TEST(LockInfoFields, EveryLocksBackendIsAKnownBackend) {
  std::vector<const LockInfo*> all;
  for (const auto& l : ListLocks()) all.push_back(&l);
  for (const auto& m : ListMutants()) all.push_back(&m);
  all.push_back(&DriverLockInfo());
  for (const LockInfo* l : all) {
    EXPECT_EQ(ParseBackend(BackendName(l->backend)), l->backend) << l->id;
  }
  EXPECT_EQ(FindLock("db-row")->backend, Backend::kMariadb);
  EXPECT_EQ(FindLock("pg-advisory")->backend, Backend::kPostgres);
  EXPECT_EQ(FindLock("etcd-lease")->backend, Backend::kEtcd);
  EXPECT_EQ(FindLock("zk-lock")->backend, Backend::kZookeeper);
  EXPECT_EQ(FindLock("set-nx-px-lua")->backend, Backend::kRedis);
}

TEST(LockInfoFields, TheLocksThatKeepTheirOwnLifetimeIgnoreTheLabTtl) {
  const std::set<std::string> own_lifetime = {"article-redislockutil", "article-watchdog",
                                              "db-row", "pg-advisory"};
  for (const auto& l : ListLocks()) {
    EXPECT_EQ(l.uses_lab_ttl, own_lifetime.count(l.id) == 0) << l.id;
    // The description says the same as the field.
    bool says_unused = l.description.find("--ttl is not used") != std::string::npos;
    EXPECT_EQ(l.uses_lab_ttl, !says_unused) << l.id << ": " << l.description;
  }
  EXPECT_TRUE(DriverLockInfo().uses_lab_ttl);
  // A mutant keeps its reference's lifetime.
  for (const auto& m : ListMutants()) {
    const LockInfo* ref = FindLock(m.mutant_of);
    ASSERT_NE(ref, nullptr) << m.id;
    EXPECT_EQ(m.uses_lab_ttl, ref->uses_lab_ttl) << m.id;
  }
}

}  // namespace
}  // namespace locklab::locks
