// The driver protocol's reader under a deterministic, libFuzzer-free mutation loop, run in
// the suite on every build (the libFuzzer target locks/fuzz/fuzz_driver_protocol.cc needs
// clang and is not), like the scenario reader's (harness/scenario/tests/scenario_fuzz_test.cc).
// Seeds: locks/fuzz/corpus (hellos, answers, point lines, bytes that are not UTF-8, deep
// nesting); each iteration mutates one of them (byte flips, deletions, JSON tokens and bad
// bytes spliced in, lines of other seeds, a stretch nested past the limit) and holds the
// reader to CheckDriverLineInput's contract: nothing throws, every rejection is one line
// of UTF-8, nothing with bad bytes is accepted. The sequence comes from a fixed seed, so a
// failure names an iteration that replays.
#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "locks/fuzz/driver_protocol_fuzz_check.h"

namespace locklab::locks {
namespace {

// About a second with RelWithDebInfo on one core. LOCKLAB_DRIVER_FUZZ_ITERATIONS and
// LOCKLAB_DRIVER_FUZZ_SEED run a longer or another sequence by hand.
int Iterations() {
  const char* e = getenv("LOCKLAB_DRIVER_FUZZ_ITERATIONS");
  return e ? atoi(e) : 20000;
}
uint64_t MutationSeed() {
  const char* e = getenv("LOCKLAB_DRIVER_FUZZ_SEED");
  return e ? strtoull(e, nullptr, 10) : 29;
}

std::vector<std::string> Seeds() {
  std::vector<std::string> out;
  // One literal (the macro is a string literal): gcc 12 warns falsely on string + literal here.
  const std::string dir = LOCKLAB_SOURCE_DIR "/locks/fuzz/corpus";
  DIR* d = opendir(dir.c_str());
  while (dirent* e = d ? readdir(d) : nullptr) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(dir + "/" + e->d_name, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    out.push_back(text.str());
  }
  if (d) closedir(d);
  return out;
}

const std::vector<std::string> kTokens = {
    "{", "}", "[", "]", "\"", ":", ",", "\n", "\r\n", "\\", "\\u0000", "\\ud800", "\\udc00",
    "\\u00ff", "\xff", "\xfe", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82",
    "\xc3\xa9", "null", "true", "-1", "0", "9223372036854775807", "1e400", "\"id\":7",
    "\"outcome\":\"ok\"", "\"outcome\":\"maybe\"", "\"token\":\"t\"", "\"fence\":-3",
    "\"validity_ms\":1.5", "\"point\":\"after-acquire\"", "\"point\":\"nope\"",
    "\"hello\":\"locklab-driver\"", "\"protocol\":1", "\"name\":", "\"backend\":\"zookeeper\"",
    "\"nodes\":99", "\"points\":[\"a-b\"]", "\"ttl_ms\":0", "\"detail\":{}",
};

std::string Mutate(std::string s, const std::vector<std::string>& seeds, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  int rounds = 1 + static_cast<int>(pick(4));
  for (int r = 0; r < rounds; ++r) {
    switch (pick(7)) {
      case 0:  // flip a byte
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1 << pick(8));
        break;
      case 1:  // delete a range
        s.erase(pick(s.size() + 1), pick(32));
        break;
      case 2:  // insert a token
        s.insert(pick(s.size() + 1), kTokens[pick(kTokens.size())]);
        break;
      case 3: {  // a line of another seed
        const std::string& o = seeds[pick(seeds.size())];
        s.insert(pick(s.size() + 1), o.substr(0, o.find('\n') + 1));
        break;
      }
      case 4: {  // nest a stretch past the limit (or just under it)
        size_t depth = kMaxJsonDepth - 2 + pick(6);
        size_t at = pick(s.size() + 1);
        s.insert(at, std::string(depth, '[') + std::string(depth, ']'));
        break;
      }
      case 5:  // duplicate a stretch
        if (!s.empty()) {
          size_t at = pick(s.size());
          s.insert(at, s.substr(at, 1 + pick(64)));
        }
        break;
      default:  // cut short
        s.resize(pick(s.size() + 1));
        break;
    }
  }
  return s;
}

TEST(DriverProtocolFuzzTest, SeedsKeepTheReadersContract) {
  std::vector<std::string> seeds = Seeds();
  ASSERT_GE(seeds.size(), 5u) << "locks/fuzz/corpus";
  for (const std::string& s : seeds) EXPECT_EQ(CheckDriverLineInput(s), "") << s;
}

TEST(DriverProtocolFuzzTest, MutatedLinesKeepTheReadersContract) {
  std::vector<std::string> seeds = Seeds();
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 rng(MutationSeed());
  const int n = Iterations();
  int failures = 0;
  for (int i = 0; i < n && failures < 5; ++i) {
    std::string input = Mutate(seeds[rng() % seeds.size()], seeds, rng);
    std::string broken = CheckDriverLineInput(input);
    if (!broken.empty()) {
      ++failures;
      ADD_FAILURE() << "iteration " << i << " (seed " << MutationSeed() << "): " << broken
                    << "\ninput: " << LineExcerpt(input, 400);
    }
  }
}

}  // namespace
}  // namespace locklab::locks
