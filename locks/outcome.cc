#include "locks/outcome.h"

#include <string>

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
  try {
    size_t used = 0;
    e.port = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || e.port <= 0 || e.port > 65535) throw 1;
  } catch (...) {
    return Status::Usage("endpoint '" + text + "': bad port");
  }
  *out = e;
  return Status::Ok();
}

}  // namespace locklab::locks
