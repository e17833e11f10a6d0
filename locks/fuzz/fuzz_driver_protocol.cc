// libFuzzer target for the driver protocol's reader (LOCKLAB_FUZZ=ON, clang): each input is
// the bytes a driver prints on its stdout, held to CheckDriverLineInput's contract
// (driver_protocol_fuzz_check.h); a broken contract aborts with the reason, so libFuzzer
// keeps the input as a crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "locks/fuzz/driver_protocol_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  std::string broken = locklab::locks::CheckDriverLineInput(bytes);
  if (!broken.empty()) {
    fprintf(stderr, "driver protocol reader contract broken: %s\n", broken.c_str());
    abort();
  }
  return 0;
}
