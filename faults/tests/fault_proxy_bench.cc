// Benchmark: PING round trips per second through a FaultProxy `pass` link next to a direct
// connection to the same lab node, one client, min-of-N style (best of `repeats`).
//   build/faults/tests/fault_proxy_bench [ROUND_TRIPS] [REPEATS]
#include <cstdio>
#include <cstdlib>

#include "faults/fault_proxy.h"
#include "harness/lab/lab_cluster.h"
#include "locks/redis_connection.h"
#include "tests/lab_fixture.h"

using namespace locklab;

static double RoundTripsPerSecond(const locks::Endpoint& e, int n) {
  locks::RedisConnection c(e, Millis(500), Millis(500));
  c.Command({"PING"});
  Nanos t0 = MonotonicNow();
  for (int i = 0; i < n; ++i) c.Command({"PING"});
  return n / (ToMillis(MonotonicNow() - t0) / 1000.0);
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20000;
  int repeats = argc > 2 ? atoi(argv[2]) : 3;
  harness::LabPaths paths;
  if (!harness::LabPaths::Discover(&paths).ok()) {
    fprintf(stderr, "lab Redis missing: ./locklab setup\n");
    return 69;
  }
  std::string dir = locklab::testing::MakeTempDir("locklab-bench");
  harness::NodeOptions o;
  o.name = "n1";
  harness::LabNode node(o, dir + "/n1", paths);
  if (!node.Start().ok()) return 69;
  faults::FaultProxy proxy;
  int port = 0;
  if (!proxy.Start().ok() || !proxy.AddLink("l", {"127.0.0.1", node.port()}, &port).ok()) return 69;
  double direct = 0, via = 0;
  for (int r = 0; r < repeats; ++r) {
    direct = std::max(direct, RoundTripsPerSecond(node.endpoint(), n));
    via = std::max(via, RoundTripsPerSecond({"127.0.0.1", port}, n));
  }
  printf("direct: %.0f round trips/s\nproxy (pass): %.0f round trips/s\nratio: %.3f\n", direct,
         via, via / direct);
  proxy.Stop();
  node.Kill();
  (void)!system(("rm -rf " + dir).c_str());
  return 0;
}
