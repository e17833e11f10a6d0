// The lab's servers (harness/lab/lab_servers.h) without starting one: the argv and files each backend
// gives its program (the same, flag for flag, as before servers became one class each), what
// LabNode's flow asks of them, and which of them form a quorum.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/lab/backend_server.h"
#include "harness/lab/lab_cluster.h"
#include "harness/lab/lab_servers.h"
#include "harness/lab/process.h"

namespace locklab::harness {
namespace {

using Argv = std::vector<std::string>;

// A scratch directory for the tests that write files, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = std::filesystem::temp_directory_path().string() + "/locklab-bs-XXXXXX";
    path_ = mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(BackendServer, TheFactoryMakesEachBackendsServer) {
  for (locks::Backend backend : locks::AllBackends()) {
    std::unique_ptr<BackendServer> server = MakeBackendServer(backend);
    ASSERT_NE(server, nullptr) << locks::BackendName(backend);
    const bool quorum = backend == locks::Backend::kEtcd || backend == locks::Backend::kZookeeper;
    EXPECT_EQ(server->forms_quorum(), quorum) << locks::BackendName(backend);
    EXPECT_EQ(server->member_has_election_port(), backend == locks::Backend::kZookeeper);
    EXPECT_EQ(server->keeps_scratch(), backend != locks::Backend::kRedis);
    EXPECT_EQ(server->runs_as_another_user(), backend == locks::Backend::kPostgres);
  }
  EXPECT_EQ(MakeBackendServer(locks::Backend::kRedis, /*sentinel=*/true)->program(),
            "redis-sentinel");
}

TEST(BackendServer, RedisTriesFivePortsForFiveSecondsTheOthersOneForTwenty) {
  for (bool sentinel : {false, true}) {
    auto redis = MakeBackendServer(locks::Backend::kRedis, sentinel);
    EXPECT_EQ(redis->start_attempts(), 5);
    EXPECT_EQ(redis->ready_timeout(), Millis(5000));
  }
  for (locks::Backend backend : {locks::Backend::kMariadb, locks::Backend::kPostgres,
                                 locks::Backend::kEtcd, locks::Backend::kZookeeper}) {
    auto server = MakeBackendServer(backend);
    EXPECT_EQ(server->start_attempts(), 1) << locks::BackendName(backend);
    EXPECT_EQ(server->ready_timeout(), Millis(20000)) << locks::BackendName(backend);
  }
}

TEST(BackendServer, ArgvPerBackend) {
  EXPECT_EQ(RedisServer::Argv("/r/redis-server", "/d/n1", 7001),
            (Argv{"/r/redis-server", "--port", "7001", "--bind", "127.0.0.1", "--dir", "/d/n1",
                  "--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", "",
                  "--dbfilename", "dump.rdb"}));
  EXPECT_EQ(SentinelServer::Argv("/r/redis-server", "/d/s1/sentinel.conf", "/d/s1", 7002),
            (Argv{"/r/redis-server", "/d/s1/sentinel.conf", "--sentinel", "--port", "7002",
                  "--bind", "127.0.0.1", "--dir", "/d/s1", "--daemonize", "no", "--logfile",
                  ""}));
  EXPECT_EQ(MariaDbServer::Argv("/usr/sbin/mariadbd", "/t/s", 7003),
            (Argv{"/usr/sbin/mariadbd", "--no-defaults", "--datadir=/t/s/data", "--port=7003",
                  "--bind-address=127.0.0.1", "--socket=/t/s/mysqld.sock",
                  "--pid-file=/t/s/mysqld.pid", "--user=root", "--skip-grant-tables",
                  "--skip-name-resolve", "--skip-log-bin", "--performance-schema=0",
                  "--innodb-buffer-pool-size=8M", "--innodb-log-file-size=4M",
                  "--innodb-flush-log-at-trx-commit=2", "--max-connections=200"}));
  PostgresServer::Programs pg;
  pg.bin = "/pg/bin";
  EXPECT_EQ(PostgresServer::InitdbArgv(pg, "/t/s"),
            (Argv{"/pg/bin/initdb", "--pgdata=/t/s/data", "--username=locklab", "--auth=trust",
                  "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"}));
  EXPECT_EQ(PostgresServer::Argv(pg, "/t/s", 7004),
            (Argv{"/pg/bin/postgres", "-D", "/t/s/data", "-p", "7004", "-c",
                  "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c",
                  "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c",
                  "shared_buffers=16MB", "-c", "max_connections=200", "-c",
                  "log_min_messages=warning"}));
  EXPECT_EQ(EtcdServer::Argv("/usr/bin/etcd", "n2", "/t/s", 7005, 7006, "n1=x,n2=y", "tok"),
            (Argv{"/usr/bin/etcd", "--name", "n2", "--data-dir", "/t/s/data",
                  "--listen-client-urls", "http://127.0.0.1:7005", "--advertise-client-urls",
                  "http://127.0.0.1:7005", "--listen-peer-urls", "http://127.0.0.1:7006",
                  "--initial-advertise-peer-urls", "http://127.0.0.1:7006", "--initial-cluster",
                  "n1=x,n2=y", "--initial-cluster-state", "new", "--initial-cluster-token", "tok",
                  "--heartbeat-interval", "50", "--election-timeout", "500", "--logger", "zap",
                  "--log-outputs", "stderr"}));
  ZooKeeperServer::Programs zk;
  zk.java = "/j/java";
  zk.zookeeper_jar = "/z/zookeeper.jar";
  Argv zk_argv = ZooKeeperServer::Argv(zk, "/t/s");
  ASSERT_GE(zk_argv.size(), 4u);
  EXPECT_EQ(zk_argv.front(), "/j/java");
  EXPECT_EQ(zk_argv.back(), "/t/s/zoo.cfg");
  EXPECT_EQ(zk_argv[zk_argv.size() - 2], "org.apache.zookeeper.server.quorum.QuorumPeerMain");
  EXPECT_EQ(zk_argv[zk_argv.size() - 3].rfind("/z/zookeeper.jar", 0), 0u)
      << "the classpath starts with the ZooKeeper jar";
}

TEST(BackendServer, ZooKeeperConfigAllowsTwoTickSessionsAndListsTheEnsemble) {
  EXPECT_EQ(ZooKeeperServer::Config("/t/s", 7007, "server.1=127.0.0.1:1:2\n"),
            "tickTime=100\ninitLimit=100\nsyncLimit=10\ndataDir=/t/s/data\nclientPort=7007\n"
            "clientPortAddress=127.0.0.1\nminSessionTimeout=200\nmaxSessionTimeout=60000\n"
            "maxClientCnxns=0\nadmin.enableServer=false\n4lw.commands.whitelist=ruok,srvr,mntr\n"
            "autopurge.purgeInterval=0\nserver.1=127.0.0.1:1:2\n");
}

TEST(BackendServer, EachQuorumListsItsMembersInItsOwnForm) {
  std::vector<NodeOptions> members(2);
  members[0].name = "n1";
  members[0].member_id = 1;
  members[0].peer_port = 101;
  members[0].election_port = 201;
  members[1].name = "n2";
  members[1].member_id = 2;
  members[1].peer_port = 102;
  members[1].election_port = 202;
  EXPECT_EQ(EtcdServer().InitialCluster(members),
            "n1=http://127.0.0.1:101,n2=http://127.0.0.1:102");
  EXPECT_EQ(ZooKeeperServer().InitialCluster(members),
            "server.1=127.0.0.1:101:201\nserver.2=127.0.0.1:102:202\n");
}

TEST(BackendServer, ARedisNodeRunsUnderItsClockUnlessToldNot) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  NodeOptions o;
  o.name = "n1";
  o.extra_args = {"--appendonly", "yes"};
  LabPaths paths{"/r/redis-server", "/f/libfaketime.so.1"};
  const std::string scratch, log = dir.path() + ".log";
  ClockControlFile clock(dir.path() + "/clock");
  ServerSite site{o, paths, dir.path(), scratch, log, clock};
  RedisServer redis;
  ASSERT_TRUE(redis.PrepareLaunch(site, 7001).ok());
  EXPECT_EQ(Slurp(clock.path()), "+0\n") << "each launch starts the node's clock at +0";
  SpawnOptions spawn;
  ASSERT_TRUE(redis.PrepareSpawn(site, 7001, &spawn).ok());
  Argv expected = RedisServer::Argv("/r/redis-server", dir.path(), 7001);
  expected.insert(expected.end(), {"--appendonly", "yes"});
  EXPECT_EQ(spawn.argv, expected) << "the node's extra args come last";
  EXPECT_EQ(spawn.env["LD_PRELOAD"], "/f/libfaketime.so.1");
  EXPECT_EQ(spawn.env["FAKETIME_TIMESTAMP_FILE"], clock.path());
  EXPECT_EQ(spawn.cwd, dir.path());

  o.faketime = false;
  SpawnOptions plain;
  ASSERT_TRUE(redis.PrepareSpawn(site, 7001, &plain).ok());
  EXPECT_TRUE(plain.env.empty());
  EXPECT_EQ(plain.unset_env, (Argv{"LD_PRELOAD", "FAKETIME_TIMESTAMP_FILE"}));
}

TEST(BackendServer, ASentinelWritesItsConfigBeforeEachSpawn) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  NodeOptions o;
  o.name = "s1";
  o.sentinel = true;
  o.sentinel_config = "sentinel monitor m 127.0.0.1 7001 2\n";
  LabPaths paths{"/r/redis-server", "/f/libfaketime.so.1"};
  const std::string scratch, log = dir.path() + ".log";
  ClockControlFile clock(dir.path() + "/clock");
  ServerSite site{o, paths, dir.path(), scratch, log, clock};
  SpawnOptions spawn;
  ASSERT_TRUE(SentinelServer().PrepareSpawn(site, 7002, &spawn).ok());
  const std::string conf = dir.path() + "/sentinel.conf";
  EXPECT_EQ(Slurp(conf), o.sentinel_config);
  EXPECT_EQ(spawn.argv, SentinelServer::Argv("/r/redis-server", conf, dir.path(), 7002));
}

TEST(BackendServer, ADatabaseRunsInItsScratchWithoutTheFakeClock) {
  const char* saved = getenv("LOCKLAB_MARIADBD");
  const std::string previous = saved ? saved : "";
  setenv("LOCKLAB_MARIADBD", "/bin/true", 1);  // executable: FindMariadbd accepts it
  NodeOptions o;
  o.name = "n1";
  o.kind = locks::Backend::kMariadb;
  LabPaths paths;
  const std::string dir = "/d/n1", scratch = "/t/locklab-mariadb-x", log = "/d/n1.log";
  ClockControlFile clock(dir + "/clock");
  ServerSite site{o, paths, dir, scratch, log, clock};
  SpawnOptions spawn;
  Status s = MariaDbServer().PrepareSpawn(site, 7003, &spawn);
  if (saved) {
    setenv("LOCKLAB_MARIADBD", previous.c_str(), 1);
  } else {
    unsetenv("LOCKLAB_MARIADBD");
  }
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(spawn.argv, MariaDbServer::Argv("/bin/true", scratch, 7003));
  EXPECT_EQ(spawn.cwd, scratch);
  EXPECT_EQ(spawn.unset_env, (Argv{"LD_PRELOAD", "FAKETIME_TIMESTAMP_FILE"}));
  EXPECT_TRUE(spawn.run_as_user.empty());
}

TEST(BackendServer, AMissingProgramNamesItsPackage) {
  const char* saved = getenv("LOCKLAB_ETCD");
  const std::string previous = saved ? saved : "";
  setenv("LOCKLAB_ETCD", "/nonexistent/etcd", 1);
  std::string path;
  Status s = EtcdServer::FindEtcd(&path);
  if (saved) {
    setenv("LOCKLAB_ETCD", previous.c_str(), 1);
  } else {
    unsetenv("LOCKLAB_ETCD");
  }
  EXPECT_EQ(s.code(), Status::Code::kInfrastructure);
  EXPECT_EQ(s.message(),
            "etcd not found at /nonexistent/etcd (apt-get install etcd-server, or set LOCKLAB_ETCD)");
}

TEST(BackendServer, TheTellingLogLineIsTheLastErrorNotAStackFrame) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string jvm = dir.path() + "/jvm.log";
  std::ofstream(jvm) << "93 [main] INFO QuorumPeerMain - Starting quorum peer\n"
                        "104 [main] ERROR QuorumPeerMain - Unexpected exception, exiting abnormally\n"
                        "java.net.BindException: Address already in use\n"
                        "\tat java.base/sun.nio.ch.Net.bind0(Native Method)\n"
                        "\tat org.apache.zookeeper.server.NIOServerCnxnFactory.configure(X.java:1)\n"
                        "\t... 3 more\n"
                        "110 [main] INFO ServiceUtils - Exiting JVM with code 1\n";
  EXPECT_EQ(TellingLogLine(jvm), "java.net.BindException: Address already in use");

  const std::string quiet = dir.path() + "/quiet.log";
  std::ofstream(quiet) << "1:M * Ready to accept connections tcp\n\n  \n";
  EXPECT_EQ(TellingLogLine(quiet), "1:M * Ready to accept connections tcp");

  const std::string redis = dir.path() + "/redis.log";
  std::ofstream(redis) << "1:M * Server initialized\n"
                          "1:M # Warning: Could not create server TCP listening socket "
                          "127.0.0.1:7001: bind: Address already in use\n"
                          "1:M * Saving the final RDB snapshot\n";
  EXPECT_NE(TellingLogLine(redis).find("bind: Address already in use"), std::string::npos);

  const std::string long_line = dir.path() + "/long.log";
  std::ofstream(long_line) << "FATAL " << std::string(300, 'x') << "\n";
  EXPECT_EQ(TellingLogLine(long_line).size(), 200u);

  EXPECT_EQ(TellingLogLine(dir.path() + "/missing.log"), "");
}

}  // namespace
}  // namespace locklab::harness
