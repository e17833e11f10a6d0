#include "base/status.h"

namespace locklab {

int Status::ExitCode() const {
  switch (code_) {
    case Code::kOk: return 0;
    case Code::kUsage: return 64;
    case Code::kBadInput: return 65;
    case Code::kInfrastructure: return 69;
    case Code::kIo: return 70;
    case Code::kInterrupted: return 2;
  }
  return 70;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return message_;
}

}  // namespace locklab
