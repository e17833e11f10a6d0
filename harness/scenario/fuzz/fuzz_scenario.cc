// libFuzzer target for the scenario reader (LOCKLAB_FUZZ=ON, clang): each input is a
// scenario file's text, held to CheckScenarioInput's contract (scenario_fuzz_check.h); a
// broken contract aborts with the reason, so libFuzzer keeps the input as a crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness/scenario/fuzz/scenario_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string broken = locklab::harness::CheckScenarioInput(text);
  if (!broken.empty()) {
    fprintf(stderr, "scenario reader contract broken: %s\n", broken.c_str());
    abort();
  }
  return 0;
}
