#include "harness/lab/run_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>

namespace locklab::harness {

Status MakeDirs(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty() && mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
        return Status::Io("mkdir " + cur + ": " + strerror(errno));
      }
    }
    if (i < path.size()) cur.push_back(path[i]);
  }
  return Status::Ok();
}

Status CreateRunDir(const std::string& out_dir_arg, const std::string& scenario, uint64_t seed,
                    std::string* run_dir) {
  // Absolute, because the nodes run with their own directory as cwd and get --dir from it:
  // a relative --out (e.g. "runs") would point redis-server at a path that does not exist.
  std::string out_dir = out_dir_arg;
  if (!out_dir.empty() && out_dir[0] != '/') {
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd)) == nullptr) return Status::Io(std::string("getcwd: ") + strerror(errno));
    out_dir = std::string(cwd) + "/" + out_dir;
  }
  for (char c : scenario) {
    if (c == '/' || c == '\0' || (scenario == "..") || (scenario == ".")) {
      return Status::Usage("scenario name '" + scenario + "' cannot be a directory name");
    }
  }
  time_t now = time(nullptr);
  struct tm tm;
  gmtime_r(&now, &tm);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
  std::string rel = scenario + "/" + stamp + "-" + std::to_string(seed);
  std::string base = out_dir + "/" + rel;
  Status s = MakeDirs(out_dir + "/" + scenario);
  if (!s.ok()) return s;
  std::string dir = base;
  for (int i = 2; mkdir(dir.c_str(), 0755) != 0; ++i) {
    if (errno != EEXIST || i > 1000) return Status::Io("mkdir " + dir + ": " + strerror(errno));
    dir = base + "-" + std::to_string(i);
  }
  rel = dir.substr(out_dir.size() + 1);
  std::string latest = out_dir + "/latest";
  std::string tmp = latest + ".tmp" + std::to_string(getpid());
  unlink(tmp.c_str());
  if (symlink(rel.c_str(), tmp.c_str()) == 0) rename(tmp.c_str(), latest.c_str());
  *run_dir = dir;
  return Status::Ok();
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Status WriteFile(const std::string& path, const std::string& content) {
  // Written to PATH.tmp and renamed into place, so a reader never sees half a file. Every
  // step is checked, flush and close included: on a full disk the bytes sit in the stdio
  // buffer until fclose, and an unchecked close renamed an empty file into place.
  std::string tmp = path + ".tmp";
  auto fail = [&](int err) {
    unlink(tmp.c_str());
    return Status::Io("write " + path + ": " + strerror(err));
  };
  FILE* f = fopen(tmp.c_str(), "w");
  if (f == nullptr) return Status::Io("write " + path + ": " + strerror(errno));
  bool ok = fwrite(content.data(), 1, content.size(), f) == content.size();
  ok = fflush(f) == 0 && ok;
  int err = errno;
  if (fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) return fail(err);
  if (rename(tmp.c_str(), path.c_str()) != 0) return fail(errno);
  return Status::Ok();
}

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string JunitXml(const std::string& suite, const nlohmann::ordered_json& checks,
                     double seconds) {
  int failures = 0, skipped = 0;
  for (const auto& c : checks) {
    const bool skip = c.value("skipped", false);
    skipped += skip;
    failures += !skip && !c.value("ok", false);
  }
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x << "<testsuite name=\"" << XmlEscape(suite) << "\" tests=\"" << checks.size()
    << "\" failures=\"" << failures << "\" skipped=\"" << skipped << "\" time=\"" << seconds << "\">\n";
  for (const auto& c : checks) {
    x << "  <testcase classname=\"" << XmlEscape(suite) << "\" name=\""
      << XmlEscape(c.value("name", std::string("?"))) << "\"";
    const std::string message = XmlEscape(c.value("message", std::string()));
    const std::string detail = XmlEscape(c.value("detail", std::string()));
    if (c.value("skipped", false)) {
      x << ">\n    <skipped message=\"" << message << "\"/>\n  </testcase>\n";
    } else if (c.value("ok", false)) {
      x << "/>\n";
    } else if (detail.empty()) {
      x << ">\n    <failure message=\"" << message << "\"/>\n  </testcase>\n";
    } else {
      x << ">\n    <failure message=\"" << message << "\">" << detail << "</failure>\n  </testcase>\n";
    }
  }
  x << "</testsuite>\n";
  return x.str();
}

}  // namespace locklab::harness
