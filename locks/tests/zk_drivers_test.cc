// The ZooKeeper example drivers (examples/drivers/kazoo_lock.py, java/curator_lock) at the
// protocol level, through DriverLock, against a real 3-member ZooKeeper ensemble that the test
// starts itself (Debian's zookeeper jars, one JVM per member, loopback ports, PDEATHSIG so it
// dies with the test): their hello (backend zookeeper, 3 nodes), acquire and release, mutual
// exclusion between two driver processes, release by a non-owner, the session as the lease
// (a holder stopped past its session timeout loses the lock to another client, and its late
// release fails), and an `unknown` (never `fail`) acquire while the ensemble is stopped.
//
// Skipped (with the reason) when java or the zookeeper jars are missing.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

#include "base/subprocess.h"
#include "harness/lab/process.h"
#include "locks/driver_lock.h"
#include "tests/lab_fixture.h"

namespace locklab::locks {
namespace {

// Until a driver's hello (start_timeout_ms, a probe's timeout): a JVM, or python3 importing
// kazoo, on a loaded 2-core machine (load 8-18) takes seconds; no test here times a start.
const Millis kDriverStart(60000);

const std::string kJava = "/usr/bin/java";
const std::string kZkJar = "/usr/share/java/zookeeper.jar";

// One four-letter-word command to a member's client port; its reply ("" when none in 1 s).
std::string FourLetter(int port, const std::string& cmd) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      write(fd, cmd.data(), cmd.size()) == static_cast<ssize_t>(cmd.size())) {
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

// A ZooKeeper ensemble of `members` JVMs on loopback: tickTime 100 ms (so session timeouts of
// 200 ms .. 60 s are granted as asked), each member's data in its own directory.
class ZkEnsemble {
 public:
  Status Start(const std::string& dir, int members) {
    std::vector<int> client(members), quorum(members), election(members);
    for (int i = 0; i < members; ++i) {
      for (int* p : {&client[i], &quorum[i], &election[i]}) {
        Status s = harness::FreeLoopbackPort(p);
        if (!s.ok()) return s;
      }
    }
    for (int i = 0; i < members; ++i) {
      std::string d = dir + "/zk" + std::to_string(i + 1);
      mkdir(d.c_str(), 0755);
      std::ofstream(d + "/myid") << (i + 1) << "\n";
      std::ofstream cfg(d + "/zoo.cfg");
      cfg << "tickTime=100\ninitLimit=100\nsyncLimit=20\ndataDir=" << d << "\nclientPort=" << client[i]
          << "\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\nmaxSessionTimeout=60000\n"
             "4lw.commands.whitelist=srvr,ruok\n";
      if (members > 1) {
        for (int j = 0; j < members; ++j) {
          cfg << "server." << (j + 1) << "=127.0.0.1:" << quorum[j] << ":" << election[j] << "\n";
        }
      }
      cfg.close();
      SubprocessOptions so;
      so.argv = {kJava, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                 "-Dzookeeper.jmx.log4j.disable=true", "-cp",
                 kZkJar + ":/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar",
                 members > 1 ? "org.apache.zookeeper.server.quorum.QuorumPeerMain"
                             : "org.apache.zookeeper.server.ZooKeeperServerMain",
                 d + "/zoo.cfg"};
      so.log_path = d + "/zk.log";
      so.death_signal = SIGKILL;  // dies with the test, whatever happens to it
      members_.emplace_back();
      Status s = Subprocess::Spawn(so, &members_.back());
      if (!s.ok()) return s;
      ports_.push_back(client[i]);
    }
    return WaitServing(Millis(60000));
  }
  // Every member answers srvr with its mode (leader, follower, standalone): a quorum serves.
  Status WaitServing(Millis timeout) {
    Nanos until = MonotonicNow() + timeout;
    for (int port : ports_) {
      while (FourLetter(port, "srvr").find("Mode: ") == std::string::npos) {
        if (MonotonicNow() > until) {
          return Status::Infrastructure("zookeeper on port " + std::to_string(port) + " not serving");
        }
        SleepFor(Millis(100));
      }
    }
    return Status::Ok();
  }
  void Signal(int sig) {
    for (auto& m : members_) {
      if (m.pid() > 0) kill(m.pid(), sig);
    }
  }
  std::vector<Endpoint> endpoints() const {
    std::vector<Endpoint> out;
    for (int p : ports_) out.push_back(Endpoint{"127.0.0.1", p});
    return out;
  }
  void Stop() { members_.clear(); }  // SIGKILL to each member's group, reaped

 private:
  std::vector<Subprocess> members_;
  std::vector<int> ports_;
};

class ZkDriverTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    if (access(kJava.c_str(), X_OK) != 0 || access(kZkJar.c_str(), R_OK) != 0) {
      skip_ = "java or " + kZkJar + " missing (openjdk-17-jdk-headless, zookeeper)";
      return;
    }
    dir_ = testing::MakeTempDir("locklab-zk");
    ensemble_ = new ZkEnsemble();
    Nanos t0 = MonotonicNow();
    Status s = ensemble_->Start(dir_, 3);
    if (!s.ok()) {
      skip_ = "ensemble did not start: " + s.message();
      return;
    }
    std::cerr << "zookeeper ensemble of 3 serving in " << ToMillis(MonotonicNow() - t0) << " ms\n";
  }
  static void TearDownTestSuite() {
    if (ensemble_ != nullptr) ensemble_->Stop();
    delete ensemble_;
    ensemble_ = nullptr;
    if (!dir_.empty() && getenv("LOCKLAB_KEEP_TEST_DIRS") == nullptr) {
      int rc = std::system(("rm -rf '" + dir_ + "'").c_str());
      (void)rc;
    }
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    // A test that stopped the ensemble let it go again; it serves again before the next.
    ASSERT_TRUE(ensemble_->WaitServing(Millis(30000)).ok());
  }
  std::string Path() const { return std::string(LOCKLAB_SOURCE_DIR) + "/" + GetParam(); }
  std::unique_ptr<DriverLock> Make(std::vector<std::string> args = {}, Millis ttl = Millis(1000)) {
    LockConfig c;
    c.algorithm = std::string(kDriverPrefix) + Path();
    c.nodes = ensemble_->endpoints();
    c.ttl = ttl;
    c.retry_delay = Millis(10);
    c.command_timeout = Millis(200);
    c.connect_timeout = Millis(200);
    c.driver_args = std::move(args);
    c.knobs = {{"start_timeout_ms", std::to_string(kDriverStart.count())}};
    DriverOptions o;
    Status s = ParseDriverOptions(c, &o);
    EXPECT_TRUE(s.ok()) << s.message();
    auto lock = std::make_unique<DriverLock>(c, o);
    Status ready = lock->WaitReady();
    EXPECT_TRUE(ready.ok()) << ready.message();
    return lock;
  }

  static inline std::string skip_;
  static inline std::string dir_;
  static inline ZkEnsemble* ensemble_ = nullptr;
};

TEST_P(ZkDriverTest, HelloAsksForThreeZookeeperNodes) {
  DriverHello h;
  Status s = ProbeDriver(Path(), {}, kDriverStart, &h);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(h.backend, Backend::kZookeeper);
  ASSERT_TRUE(h.nodes.has_value());
  EXPECT_EQ(*h.nodes, 3);
  EXPECT_FALSE(h.renew) << "the session is kept alive by the client library's own thread";
}

TEST_P(ZkDriverTest, AcquireReleaseAndMutualExclusionBetweenTwoDrivers) {
  auto a = Make();
  auto b = Make();
  LockResult ra = a->Acquire("lock:a", MonotonicNow() + Millis(5000));
  ASSERT_EQ(ra.outcome, Outcome::kOk) << ra.detail;
  EXPECT_EQ(ra.lease.token.rfind("/locklab-locks/lock:a/", 0), 0u) << ra.lease.token;
  EXPECT_EQ(ra.lease.validity, Millis(1000)) << "the session timeout granted (= the TTL asked)";
  ASSERT_EQ(b->Acquire("warm", MonotonicNow() + Millis(5000)).outcome, Outcome::kOk);  // connected

  Nanos t0 = MonotonicNow();
  LockResult rb = b->Acquire("lock:a", t0 + Millis(1000));
  EXPECT_EQ(rb.outcome, Outcome::kFail) << rb.detail;
  EXPECT_LE(ToMillis(MonotonicNow() - t0), 1000) << "answered in time";
  // A release with a token that is not a lock node leaves the holder alone.
  Lease forged = ra.lease;
  forged.token = "/locklab-locks/lock:a/not-the-owner";
  EXPECT_EQ(b->Release(forged).outcome, Outcome::kFail);
  EXPECT_EQ(b->Acquire("lock:a", MonotonicNow() + Millis(600)).outcome, Outcome::kFail)
      << "still held by a";

  ASSERT_EQ(a->Release(ra.lease).outcome, Outcome::kOk);
  EXPECT_EQ(a->Release(ra.lease).outcome, Outcome::kFail) << "its node is gone: not owned";
  LockResult rb2 = b->Acquire("lock:a", MonotonicNow() + Millis(3000));
  ASSERT_EQ(rb2.outcome, Outcome::kOk) << rb2.detail;
  EXPECT_NE(rb2.lease.token, ra.lease.token);
  EXPECT_EQ(b->Release(rb2.lease).outcome, Outcome::kOk);
}

TEST_P(ZkDriverTest, FenceIsTheNodesCzxidAndGrowsWithEachHolder) {
  auto a = Make({"--fence"});
  LockResult r1 = a->Acquire("lock:f", MonotonicNow() + Millis(5000));
  ASSERT_EQ(r1.outcome, Outcome::kOk) << r1.detail;
  ASSERT_GE(r1.lease.fence, 0) << "--fence answers a fence";
  ASSERT_EQ(a->Release(r1.lease).outcome, Outcome::kOk);
  LockResult r2 = a->Acquire("lock:f", MonotonicNow() + Millis(5000));
  ASSERT_EQ(r2.outcome, Outcome::kOk) << r2.detail;
  EXPECT_GT(r2.lease.fence, r1.lease.fence);
  EXPECT_EQ(a->Release(r2.lease).outcome, Outcome::kOk);
}

// The lease is the session: a holder stopped (as a client-pause stops it) past its session
// timeout loses its lock node, a second client gets the lock, and the first one's release,
// once it runs again, finds its node gone.
TEST_P(ZkDriverTest, AHolderStoppedPastItsSessionTimeoutLosesTheLock) {
  auto a = Make();
  auto b = Make();
  LockResult ra = a->Acquire("lock:s", MonotonicNow() + Millis(5000));
  ASSERT_EQ(ra.outcome, Outcome::kOk) << ra.detail;
  ASSERT_EQ(b->Acquire("warm-s", MonotonicNow() + Millis(5000)).outcome, Outcome::kOk);
  pid_t holder = a->driver_pid();
  ASSERT_GT(holder, 0);
  kill(holder, SIGSTOP);
  Nanos t0 = MonotonicNow();
  LockResult rb = b->Acquire("lock:s", t0 + Millis(4000));
  double waited = ToMillis(MonotonicNow() - t0);
  kill(holder, SIGCONT);
  ASSERT_EQ(rb.outcome, Outcome::kOk) << rb.detail;
  EXPECT_GE(waited, 500) << "not before the holder's session (1000 ms) could expire";
  // Its client learns that its session expired as it reconnects: a release meanwhile cannot
  // tell (unknown, or fail when not connected yet); once connected again, its node is gone.
  LockResult rel = a->Release(ra.lease);
  for (int i = 0; i < 20 && rel.outcome != Outcome::kFail; ++i) {
    EXPECT_NE(rel.outcome, Outcome::kOk) << "released a lock node that expired: " << rel.detail;
    SleepFor(Millis(250));
    rel = a->Release(ra.lease);
  }
  EXPECT_EQ(rel.outcome, Outcome::kFail) << rel.detail;
  EXPECT_NE(rel.detail.find("not owned"), std::string::npos) << rel.detail;
  EXPECT_EQ(b->Release(rb.lease).outcome, Outcome::kOk);
}

// Every member stopped past the request's deadline: the acquire may have been sent, it is
// `unknown`, never `fail`; the drivers work again once the ensemble runs.
TEST_P(ZkDriverTest, StoppedEnsembleMakesTheAcquireUnknownNotFail) {
  auto a = Make();
  LockResult warm = a->Acquire("lock:u", MonotonicNow() + Millis(5000));
  ASSERT_EQ(warm.outcome, Outcome::kOk) << warm.detail;
  ASSERT_EQ(a->Release(warm.lease).outcome, Outcome::kOk);
  ensemble_->Signal(SIGSTOP);
  LockResult r = a->Acquire("lock:u", MonotonicNow() + Millis(1500));
  ensemble_->Signal(SIGCONT);
  EXPECT_EQ(r.outcome, Outcome::kUnknown) << r.detail;
  EXPECT_EQ(r.detail.find("driver protocol:"), std::string::npos)
      << "the driver answers by its deadline itself (not killed for a late answer): " << r.detail;
  ASSERT_TRUE(ensemble_->WaitServing(Millis(30000)).ok());
  // The session may have expired meanwhile (or the stale node of the unknown acquire may
  // hold the key until it does): a fresh key works within a few session timeouts.
  // On a loaded machine the ensemble may hold an election after the stop: a few tries.
  LockResult again;
  for (int i = 0; i < 4 && again.outcome != Outcome::kOk; ++i) {
    again = a->Acquire("lock:u2", MonotonicNow() + Millis(8000));
    if (again.outcome != Outcome::kOk) std::cerr << "not yet: " << again.detail << "\n";
  }
  EXPECT_EQ(again.outcome, Outcome::kOk) << again.detail;
}

INSTANTIATE_TEST_SUITE_P(Drivers, ZkDriverTest,
                         ::testing::Values("examples/drivers/kazoo_lock.py",
                                           "examples/drivers/java/curator_lock"),
                         [](const auto& info) {
                           return std::string(info.param.find("kazoo") != std::string::npos
                                                  ? "Kazoo"
                                                  : "Curator");
                         });

}  // namespace
}  // namespace locklab::locks
