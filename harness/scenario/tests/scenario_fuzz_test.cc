// The scenario reader under a deterministic, libFuzzer-free mutation loop, run in the suite
// on every build (the libFuzzer target harness/scenario/fuzz/fuzz_scenario.cc needs clang and is not).
// Seeds: every scenario the lab ships plus hand-written edge cases; each iteration mutates
// one of them (byte flips, deletions, TOML tokens spliced in, lines swapped between seeds)
// and holds the reader to CheckScenarioInput's contract: no crash, every rejection one
// line naming file and line, and a written-back scenario that replays as itself. The
// mutation sequence comes from a fixed seed, so a failure names an iteration that replays.
#include <dirent.h>

#include <cstdlib>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/scenario/fuzz/scenario_fuzz_check.h"

namespace locklab::harness {
namespace {

// Under a second with RelWithDebInfo on one core (about 10 s under ASan+UBSan). LOCKLAB_SCENARIO_FUZZ_ITERATIONS and
// LOCKLAB_SCENARIO_FUZZ_SEED run a longer or another sequence by hand.
int Iterations() {
  const char* e = getenv("LOCKLAB_SCENARIO_FUZZ_ITERATIONS");
  return e ? atoi(e) : 20000;
}
uint64_t MutationSeed() {
  const char* e = getenv("LOCKLAB_SCENARIO_FUZZ_SEED");
  return e ? strtoull(e, nullptr, 10) : 15;
}

// `runnable`: only the scenarios meant to run as they are (the matrix presets name nodes
// that the matrix cuts to each lock's own).
std::vector<std::string> Seeds(bool runnable = false) {
  std::vector<std::string> out;
  for (const char* sub : {"/scenarios/matrix", "/scenarios/known-answers", "/scenario/fuzz/corpus"}) {
    if (runnable && std::string(sub) == "/scenarios/matrix") continue;
    std::string dir = std::string(LOCKLAB_SOURCE_DIR) + sub;
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) continue;
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() < 5 || name.substr(name.size() - 5) != ".toml" || name == "expected.toml") continue;
      std::ifstream in(dir + "/" + name);
      std::ostringstream text;
      text << in.rdbuf();
      out.push_back(text.str());
    }
    closedir(d);
  }
  return out;
}

// Pieces of TOML and of the scenario schema: mutations built from them reach past the
// syntax into the reader's own checks.
const std::vector<std::string> kTokens = {
    "[lock]\n", "[[faults]]\n", "[fault]\n", "[workload]\n", "[topology]\n", "[expect]\n",
    "[lock.knobs]\n", "id = ", "\"", "'", "'''", "\"\"\"", "=", "\n", "[", "]", "{", "}", ",",
    ".", "#", "\\", "\\u0000", "\\n", "\t", "\r\n", "\xff", "\xc3\xa9", "-1", "0", "1",
    "9223372036854775807", "99999999999999999999", "1e9", "0x7f", "true", "inf", "nan",
    "1979-05-27T07:32:00Z", "targets = [", "nodes = [", "first_at_ms = ", "duration_ms = ",
    "windows = ", "interval_ms = ", "clients = ", "ttl_ms = ", "seed = ", "trials = ",
    "endpoints = [\"redis://127.0.0.1:1\"]", "endpoint_control = ", "replicas = ",
    "sentinels = ", "verdict = ", "driver_args = []", "id = \"driver:x\"",
    "id = \"client-pause\"\n", "id = \"redlock\"\n", "id = \"failover\"\n", "id = \"none\"\n",
    "point = \"before-write\"\n", "mode = \"random\"\n", "offset = \"+20s\"\n",
    "a.b.c = 1\n", "x = {y = 1}\n", "faults = 3\n", "lock = \"x\"\n",
};

std::string Mutate(std::string s, const std::vector<std::string>& seeds, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  int rounds = 1 + static_cast<int>(pick(4));
  for (int r = 0; r < rounds; ++r) {
    switch (pick(7)) {
      case 0:  // flip a byte
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1 << pick(8));
        break;
      case 1: {  // delete a range
        size_t at = pick(s.size() + 1), len = pick(32);
        s.erase(at, len);
        break;
      }
      case 2:  // insert a token
        s.insert(pick(s.size() + 1), kTokens[pick(kTokens.size())]);
        break;
      case 3: {  // replace a number with another
        size_t at = s.find_first_of("0123456789", pick(s.size() + 1));
        if (at != std::string::npos) {
          size_t end = s.find_first_not_of("0123456789", at);
          s.replace(at, end == std::string::npos ? std::string::npos : end - at,
                    kTokens[28 + pick(6)]);
        }
        break;
      }
      case 4: {  // a line of another seed
        const std::string& o = seeds[pick(seeds.size())];
        size_t a = o.rfind('\n', pick(o.size() + 1));
        a = a == std::string::npos ? 0 : a + 1;
        size_t b = o.find('\n', a);
        std::string line = o.substr(a, b == std::string::npos ? std::string::npos : b - a + 1);
        size_t at = s.find('\n', pick(s.size() + 1));
        s.insert(at == std::string::npos ? s.size() : at + 1, line);
        break;
      }
      case 5:  // duplicate a stretch
        if (!s.empty()) {
          size_t at = pick(s.size()), len = 1 + pick(64);
          s.insert(at, s.substr(at, len));
        }
        break;
      default:  // cut the file short
        s.resize(pick(s.size() + 1));
        break;
    }
  }
  return s;
}

TEST(ScenarioFuzzTest, SeedsAreValidScenarios) {
  std::vector<std::string> seeds = Seeds();
  ASSERT_GE(seeds.size(), 15u) << "the shipped scenarios were not found under " << LOCKLAB_SOURCE_DIR;
  for (const auto& s : seeds) EXPECT_EQ(CheckScenarioInput(s), "") << s;
  // And each scenario meant to run as it is passes the checks `locklab run` makes first.
  for (const auto& s : Seeds(/*runnable=*/true)) {
    RunOptions o;
    ASSERT_TRUE(ParseScenario(s, "seed.toml", &o).ok()) << s;
    Status v = ValidateRunOptions(o);
    EXPECT_TRUE(v.ok()) << v.message() << "\n" << s;
  }
}

TEST(ScenarioFuzzTest, MutatedScenariosKeepTheReadersContract) {
  std::vector<std::string> seeds = Seeds();
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 rng(MutationSeed());
  const int iterations = Iterations();
  int rejected = 0, accepted = 0;
  for (int i = 0; i < iterations; ++i) {
    std::string input = Mutate(seeds[rng() % seeds.size()], seeds, rng);
    std::string broken = CheckScenarioInput(input);
    ASSERT_EQ(broken, "") << "iteration " << i << ", input:\n" << input;
    RunOptions o;
    (ParseScenario(input, "fuzz.toml", &o).ok() ? accepted : rejected)++;
  }
  // Both sides exercised: a mutator that only breaks the syntax tests one path.
  EXPECT_GT(accepted, iterations / 20);
  EXPECT_GT(rejected, iterations / 20);
  std::cout << "scenario fuzz: " << iterations << " inputs, " << accepted << " accepted, "
            << rejected << " rejected\n";
}

}  // namespace
}  // namespace locklab::harness
