// RunOptions' small helpers (run_options.h): driver paths, display names, Redis URLs, node
// counts. The flag reader is run_flags.cc, the scenario file's reader and writer
// scenario_reader.cc and scenario_writer.cc, the checks before a run run_checks.cc.
#include "harness/scenario/run_options.h"

#include <cctype>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "base/numbers.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

namespace locklab::harness {

Status ResolveDriverPath(const std::string& lock_id, std::string* resolved) {
  resolved->clear();
  if (!locks::IsDriverId(lock_id)) {
    if (lock_id == "driver:") return Status::Usage("lock 'driver:': no program path after driver:");
    return Status::Ok();
  }
  std::string path = lock_id.substr(sizeof(locks::kDriverPrefix) - 1);
  std::vector<std::string> candidates = {path};
  if (path[0] != '/') candidates.push_back(std::string(LOCKLAB_SOURCE_DIR) + "/" + path);
  for (const auto& c : candidates) {
    struct stat st;
    if (stat(c.c_str(), &st) != 0) continue;
    if (!S_ISREG(st.st_mode)) return Status::Usage("lock driver '" + path + "': not a regular file");
    if (access(c.c_str(), X_OK) != 0) {
      return Status::Usage("lock driver '" + path + "': not executable (chmod +x, with a #! line)");
    }
    char buf[PATH_MAX];
    *resolved = realpath(c.c_str(), buf) ? std::string(buf) : c;
    return Status::Ok();
  }
  return Status::Usage("lock driver '" + path + "': no such file (looked in the current directory" +
                       (path[0] != '/' ? std::string(" and ") + LOCKLAB_SOURCE_DIR : std::string()) + ")");
}

namespace {

// The nearest directory at or above `dir` that holds a .git (a folder, or a worktree's file).
std::optional<std::filesystem::path> GitRoot(std::filesystem::path dir) {
  std::error_code ec;
  for (; !dir.empty(); dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / ".git", ec)) return dir;
    if (dir == dir.root_path()) break;
  }
  return std::nullopt;
}

// `path` relative to `root` when it lies under it.
std::optional<std::string> Under(const std::filesystem::path& path, const std::filesystem::path& root) {
  std::filesystem::path rel = path.lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") return std::nullopt;
  return rel.generic_string();
}

}  // namespace

std::string CanonicalLockId(const std::string& lock_id, const std::string& base_dir) {
  namespace fs = std::filesystem;
  if (!locks::IsDriverId(lock_id)) return lock_id;
  const std::string prefix = locks::kDriverPrefix;
  const std::string path = lock_id.substr(prefix.size());
  std::error_code ec;
  const fs::path base = base_dir.empty() ? fs::current_path(ec) : fs::absolute(base_dir, ec);
  fs::path file = fs::path(path).is_absolute() ? fs::path(path) : base / path;
  if (!fs::is_regular_file(file, ec) && !fs::path(path).is_absolute()) {
    file = fs::path(LOCKLAB_SOURCE_DIR) / path;  // as ResolveDriverPath looks it up
  }
  if (!fs::is_regular_file(file, ec)) {
    std::string text = fs::path(path).lexically_normal().generic_string();
    return prefix + (text.empty() ? path : text);
  }
  const fs::path real = fs::weakly_canonical(file, ec);
  const fs::path abs = ec ? file.lexically_normal() : real;
  std::optional<std::string> rel;
  if (auto root = GitRoot(abs.parent_path())) rel = Under(abs, fs::weakly_canonical(*root, ec));
  if (!rel) rel = Under(abs, fs::weakly_canonical(LOCKLAB_SOURCE_DIR, ec));
  if (!rel) rel = Under(abs, fs::weakly_canonical(base, ec));
  return prefix + (rel ? *rel : abs.generic_string());
}

std::string LockDisplayName(const std::string& lock_id) {
  if (!locks::IsDriverId(lock_id)) {
    std::string name = lock_id;  // "mutant:plain-del" -> "mutant-plain-del": no ':' in paths
    for (char& c : name) c = c == ':' ? '-' : c;
    return name;
  }
  std::string base = lock_id.substr(lock_id.find_last_of(":/") + 1);
  auto dot = base.find('.');
  if (dot != std::string::npos && dot > 0) base = base.substr(0, dot);
  if (base.empty() || base == "." || base == "..") base = "program";
  return "driver-" + base;
}

std::vector<std::string> FaultIdList(const RunOptions& o) {
  std::vector<std::string> ids;
  for (const auto& f : o.faults) ids.push_back(f.id);
  return ids;
}

std::string FaultIds(const RunOptions& o) {
  if (o.faults.empty()) return "none";
  std::string out;
  for (const std::string& id : FaultIdList(o)) out += (out.empty() ? "" : "+") + id;
  return out;
}

bool ParseRedisUrl(const std::string& url, std::string* host, int* port, std::string* error) {
  const std::string scheme = "redis://";
  if (url.rfind(scheme, 0) != 0) {
    *error = "'" + url + "' is not redis://host:port";
    return false;
  }
  std::string rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('@') != std::string::npos || rest.find('/') != std::string::npos ||
      rest.find('?') != std::string::npos) {
    *error = "'" + url + "': only redis://host:port (no user, password, database or options)";
    return false;
  }
  size_t colon = rest.rfind(':');
  std::optional<int64_t> p;
  if (colon != std::string::npos && colon != 0) p = ParseInt(rest.substr(colon + 1), 1, 65535);
  if (!p) {
    *error = "'" + url + "' is not redis://host:port (port 1-65535)";
    return false;
  }
  *host = rest.substr(0, colon);
  for (char c : *host) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') {
      *error = "'" + url + "': host '" + *host + "' is not a host name or IPv4 address";
      return false;
    }
  }
  *port = static_cast<int>(*p);
  return true;
}

int LockNodes(const RunOptions& o) {
  if (o.nodes > 0) return o.nodes;
  const locks::LockInfo* info = locks::FindLock(o.lock);
  return info ? info->default_nodes : 0;
}

}  // namespace locklab::harness
