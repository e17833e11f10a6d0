#include "locks/outcome.h"

#include <optional>
#include <string>

#include "base/numbers.h"

namespace locklab::locks {

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kOk: return "ok";
    case Outcome::kFail: return "fail";
    case Outcome::kUnknown: return "info";
  }
  return "?";
}

Status ParseEndpoint(const std::string& text, Endpoint* out) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return Status::Usage("endpoint '" + text + "': expected host:port");
  }
  Endpoint e;
  e.host = text.substr(0, colon);
  std::optional<int64_t> port = ParseInt(text.substr(colon + 1), 1, 65535);
  if (!port) return Status::Usage("endpoint '" + text + "': bad port");
  e.port = static_cast<int>(*port);
  *out = e;
  return Status::Ok();
}

}  // namespace locklab::locks
