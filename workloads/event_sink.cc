#include "workloads/event_sink.h"

#include <unistd.h>

#include <cerrno>
#include <mutex>

namespace locklab::workloads {
namespace {
std::mutex g_write_mu;
}

void FdEventSink::Emit(const char* type, const char* f, const std::string& key,
                       const nlohmann::json& value) {
  EmitAs(process_, type, f, key, value);
}

void FdEventSink::EmitAs(int64_t process, const char* type, const char* f, const std::string& key,
                         const nlohmann::json& value) {
  nlohmann::ordered_json j;
  j["time_ns"] = MonotonicNow().count();
  j["process"] = process;
  j["type"] = type;
  j["f"] = f;
  j["key"] = key;
  j["value"] = value;
  // `replace`: a byte that is not UTF-8 (from a lock driver, say) must not make dump()
  // throw and abort the client; the lock layers escape such bytes first, this is the floor.
  WriteLine(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void FdEventSink::Control(const nlohmann::json& message) {
  WriteLine(message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void FdEventSink::WriteLine(const std::string& line) {
  std::string buf = line + "\n";
  std::lock_guard<std::mutex> lock(g_write_mu);
  size_t off = 0;
  while (off < buf.size()) {
    ssize_t n = write(fd_, buf.data() + off, buf.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the harness is gone; nothing left to tell
    off += static_cast<size_t>(n);
  }
}

}  // namespace locklab::workloads
