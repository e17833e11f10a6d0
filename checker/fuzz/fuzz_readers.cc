// libFuzzer target for the history readers, then the checker on whatever they accept.
// FUZZ_FORMAT selects the reader at compile time: 0 jsonl, 1 edn, 2 porcupine-etcd.
// Properties: no crash, no hang (the checker runs under a small budget), and every error is
// one line that starts with the file name and a line number.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "checker/history_formats.h"
#include "checker/linearizability.h"

using namespace locklab::checker;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  History h;
  locklab::Status s = ParseHistory(text, static_cast<HistoryFormat>(FUZZ_FORMAT), "f", &h);
  if (!s.ok()) {
    const std::string& m = s.message();
    if (m.find('\n') != std::string::npos || m.rfind("f:", 0) != 0 || m.size() < 4 ||
        m[2] < '0' || m[2] > '9') {
      std::abort();  // not a one-line "f:LINE: ..." message
    }
    return 0;
  }
  LinearizabilityOptions o;
  o.time_budget = std::chrono::milliseconds(200);
  o.memory_budget_bytes = 64 << 20;
  for (Model m : kAllModels) {
    LinearizabilityResult r;
    s = CheckLinearizability(h, m, o, "f", &r);
    if (s.ok()) {
      (void)r.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);  // must not throw
      (void)r.ToText();
    } else if (s.message().find('\n') != std::string::npos) {
      std::abort();
    }
  }
  return 0;
}
