#include "checker/history_formats.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/json_limits.h"

namespace locklab::checker {

namespace {

// An input stream buffer over characters owned elsewhere, so a whole file is not copied into
// an istringstream to be read line by line.
class ViewStreamBuf : public std::streambuf {
 public:
  explicit ViewStreamBuf(std::string_view v) {
    char* p = const_cast<char*>(v.data());  // only read: setg needs char*
    setg(p, p, p + v.size());
  }
};

}  // namespace
namespace {

// Nesting of EDN forms an op map may hold (the map is level 1): the lab's one limit for
// outside data (base/json_limits.h), checked as the reader descends, so it never recurses
// deeper than that.
constexpr int kMaxDepth = kMaxJsonDepth;

Status LineError(const std::string& name, int line, const std::string& what) {
  return Status::BadInput(name + ":" + std::to_string(line) + ": " + what);
}

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 24) return false;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-' || s[0] == '+') {
    neg = s[0] == '-';
    i = 1;
  }
  if (i == s.size()) return false;
  // Accumulate as negative to reach INT64_MIN.
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c < '0' || c > '9') return false;
    int d = c - '0';
    if (v < (INT64_MIN + d) / 10) return false;
    v = v * 10 - d;
  }
  if (!neg) {
    if (v == INT64_MIN) return false;
    v = -v;
  }
  *out = v;
  return true;
}

// ---- EDN ---------------------------------------------------------------------------------

class EdnReader {
 public:
  EdnReader(std::string_view text, const std::string& name) : t_(text), name_(name) {}

  int line() const { return line_; }

  // Skips whitespace, commas, comments and #_ discards (a discarded form counts one level
  // below `depth`, so a chain of #_ cannot recurse past the limit either).
  Status SkipWs(int depth = 0) {
    while (p_ < t_.size()) {
      char c = t_[p_];
      if (c == '\n') {
        ++line_;
        ++p_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == ',' || c == '\f') {
        ++p_;
      } else if (c == ';') {
        while (p_ < t_.size() && t_[p_] != '\n') ++p_;
      } else if (c == '#' && p_ + 1 < t_.size() && t_[p_ + 1] == '_') {
        p_ += 2;
        nlohmann::json discard;
        Status s = Value(&discard, depth + 1);
        if (!s.ok()) return s;
      } else {
        break;
      }
    }
    return Status::Ok();
  }
  bool AtEnd() const { return p_ >= t_.size(); }
  char Peek() const { return p_ < t_.size() ? t_[p_] : '\0'; }
  void Advance() { ++p_; }

  Status Value(nlohmann::json* out, int depth) {
    if (depth > kMaxDepth) {
      too_deep_ = true;
      return Err("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    Status s = SkipWs(depth);
    if (!s.ok()) return s;
    if (AtEnd()) return Err("unexpected end of input");
    char c = t_[p_];
    switch (c) {
      case '[': ++p_; return Seq(']', out, depth);
      case '(': ++p_; return Seq(')', out, depth);
      case '{': ++p_; return Map(out, depth);
      case ']': case ')': case '}': return Err(std::string("unexpected '") + c + "'");
      case '"': return String(out);
      case '\\': {  // character literal
        ++p_;
        size_t b = p_;
        while (p_ < t_.size() && !Delim(t_[p_])) ++p_;
        if (p_ == b && p_ < t_.size()) ++p_;
        std::string ch(t_.substr(b, p_ - b));
        for (char& c2 : ch) {
          if (static_cast<unsigned char>(c2) >= 0x80) c2 = '?';
        }
        *out = std::move(ch);
        return Status::Ok();
      }
      case '#': {
        ++p_;
        if (Peek() == '{') {
          ++p_;
          return Seq('}', out, depth);
        }
        // A tagged literal: #tag value -> value.
        size_t b = p_;
        while (p_ < t_.size() && !Delim(t_[p_])) ++p_;
        if (p_ == b) return Err("bad '#' dispatch");
        return Value(out, depth + 1);
      }
      default: return Atom(out);
    }
  }

  Status Err(const std::string& what) const { return LineError(name_, line_, what); }

 private:
  // A key short and plain enough to name in a one-line message.
  static bool IsPlainKey(const std::string& k) {
    if (k.empty() || k.size() > 40) return false;
    for (char c : k) {
      if (c < 0x21 || c > 0x7e) return false;
    }
    return true;
  }

  static bool Delim(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '\f' ||
           c == '[' || c == ']' || c == '(' || c == ')' || c == '{' || c == '}' || c == '"' ||
           c == ';';
  }

  Status Seq(char close, nlohmann::json* out, int depth) {
    *out = nlohmann::json::array();
    while (true) {
      Status s = SkipWs(depth);
      if (!s.ok()) return s;
      if (AtEnd()) return Err(std::string("missing '") + close + "'");
      if (t_[p_] == close) {
        ++p_;
        return Status::Ok();
      }
      nlohmann::json v;
      s = Value(&v, depth + 1);
      if (!s.ok()) return s;
      out->push_back(std::move(v));
    }
  }

  Status Map(nlohmann::json* out, int depth) {
    *out = nlohmann::json::object();
    while (true) {
      Status s = SkipWs(depth);
      if (!s.ok()) return s;
      if (AtEnd()) return Err("missing '}'");
      if (t_[p_] == '}') {
        ++p_;
        return Status::Ok();
      }
      nlohmann::json k, v;
      s = Value(&k, depth + 1);
      if (!s.ok()) return s;
      s = SkipWs(depth);
      if (!s.ok()) return s;
      if (AtEnd() || t_[p_] == '}') return Err("map with an odd number of forms");
      std::string key = k.is_string()
                            ? k.get<std::string>()
                            : k.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      s = Value(&v, depth + 1);
      if (!s.ok()) {
        // An op map's value too deep: the error names its field, like the JSONL reader's.
        if (too_deep_ && depth == 1 && IsPlainKey(key)) {
          return HistoryFieldError(name_, line_, key,
                                   "nested deeper than " + std::to_string(kMaxDepth) + " levels");
        }
        return s;
      }
      (*out)[key] = std::move(v);
    }
  }

  Status String(nlohmann::json* out) {
    ++p_;
    std::string r;
    while (true) {
      if (p_ >= t_.size()) return Err("unterminated string");
      char c = t_[p_++];
      if (c == '"') break;
      if (c == '\n') ++line_;
      if (c == '\\') {
        if (p_ >= t_.size()) return Err("unterminated string");
        char e = t_[p_++];
        switch (e) {
          case 'n': r += '\n'; break;
          case 't': r += '\t'; break;
          case 'r': r += '\r'; break;
          case '\n': ++line_; r += e; break;
          default: r += e; break;
        }
        continue;
      }
      r += c;
    }
    // nlohmann rejects invalid UTF-8 when dumping; keep only ASCII-safe content.
    for (char& ch : r) {
      if (static_cast<unsigned char>(ch) >= 0x80) ch = '?';
    }
    *out = std::move(r);
    return Status::Ok();
  }

  Status Atom(nlohmann::json* out) {
    size_t b = p_;
    while (p_ < t_.size() && !Delim(t_[p_])) ++p_;
    std::string_view a = t_.substr(b, p_ - b);
    if (a.empty()) return Err("unexpected character");
    if (a[0] == ':') {
      std::string k(a.substr(1));
      for (char& ch : k) {
        if (static_cast<unsigned char>(ch) >= 0x80) ch = '?';
      }
      *out = std::move(k);
      return Status::Ok();
    }
    if (a == "nil") {
      *out = nullptr;
      return Status::Ok();
    }
    if (a == "true" || a == "false") {
      *out = a == "true";
      return Status::Ok();
    }
    char c0 = a[0];
    bool numeric = (c0 >= '0' && c0 <= '9') ||
                   ((c0 == '-' || c0 == '+') && a.size() > 1 && a[1] >= '0' && a[1] <= '9');
    if (numeric) {
      std::string_view digits = a;
      if (digits.back() == 'N') digits.remove_suffix(1);
      int64_t v;
      if (ParseInt(digits, &v)) {
        *out = v;
        return Status::Ok();
      }
      std::string num(a);
      if (num.back() == 'M') num.pop_back();
      char* end = nullptr;
      errno = 0;
      double d = std::strtod(num.c_str(), &end);
      if (end && *end == '\0' && errno == 0 && num.find_first_of("xXnN") == std::string::npos) {
        *out = d;
        return Status::Ok();
      }
      return Err("bad number '" + std::string(a.substr(0, 40)) + "'");
    }
    std::string sym(a);
    for (char& ch : sym) {
      if (static_cast<unsigned char>(ch) >= 0x80) ch = '?';
    }
    *out = std::move(sym);  // a symbol
    return Status::Ok();
  }

  std::string_view t_;
  const std::string& name_;
  size_t p_ = 0;
  int line_ = 1;
  bool too_deep_ = false;  // the error being returned is the nesting limit's
};

Status EdnOpToEvent(const nlohmann::json& m, const std::string& name, int line, int64_t pos,
                    Event* e) {
  if (!m.is_object()) return LineError(name, line, "expected a map {:process .. :type ..}");
  e->line = line;
  e->index = pos;
  e->time = Nanos(pos);
  auto it = m.find("process");
  if (it == m.end()) return HistoryFieldError(name, line, "process", "missing");
  if (it->is_number_integer()) {
    e->process = it->get<int64_t>();
    if (e->process < 0) return HistoryFieldError(name, line, "process", "negative process id");
  } else if (it->is_string() && it->get<std::string>() == "nemesis") {
    e->process = kNemesisProcess;
  } else {
    return HistoryFieldError(name, line, "process", "expected an integer or :nemesis");
  }
  it = m.find("type");
  if (it == m.end()) return HistoryFieldError(name, line, "type", "missing");
  std::string t = it->is_string() ? it->get<std::string>() : "";
  if (t == "invoke") e->type = EventType::kInvoke;
  else if (t == "ok") e->type = EventType::kOk;
  else if (t == "fail") e->type = EventType::kFail;
  else if (t == "info") e->type = EventType::kInfo;
  else return HistoryFieldError(name, line, "type", "expected :invoke, :ok, :fail or :info");
  it = m.find("f");
  if (it == m.end()) return HistoryFieldError(name, line, "f", "missing");
  if (!it->is_string()) return HistoryFieldError(name, line, "f", "expected a keyword");
  e->f = it->get<std::string>();
  it = m.find("value");
  e->value = it == m.end() ? nlohmann::json() : *it;
  e->key.clear();
  return Status::Ok();
}

// ---- Porcupine etcd ----------------------------------------------------------------------

std::vector<std::string_view> Fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    if (i >= s.size()) break;
    size_t b = i;
    if (s[i] == '[') {  // a bracketed value is one field
      while (i < s.size() && s[i] != ']') ++i;
      if (i < s.size()) ++i;
    } else {
      while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') ++i;
    }
    out.push_back(s.substr(b, i - b));
  }
  return out;
}

bool EtcdScalar(std::string_view v, nlohmann::json* out) {
  int64_t n;
  if (v == "nil") *out = nullptr;
  else if (ParseInt(v, &n)) *out = n;
  else if (v.size() > 1 && v[0] == ':') {
    std::string k(v.substr(1));
    for (char& ch : k) {
      if (static_cast<unsigned char>(ch) >= 0x80) ch = '?';  // keep JSON dumps valid UTF-8
    }
    *out = std::move(k);
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool ParseHistoryFormat(const std::string& name, HistoryFormat* out) {
  if (name == "jsonl") *out = HistoryFormat::kJsonl;
  else if (name == "edn") *out = HistoryFormat::kEdn;
  else if (name == "porcupine-etcd") *out = HistoryFormat::kPorcupineEtcd;
  else return false;
  return true;
}

const char* HistoryFormatName(HistoryFormat f) {
  switch (f) {
    case HistoryFormat::kJsonl: return "jsonl";
    case HistoryFormat::kEdn: return "edn";
    case HistoryFormat::kPorcupineEtcd: return "porcupine-etcd";
  }
  return "?";
}

HistoryFormat DetectHistoryFormat(const std::string& path, std::string_view content) {
  auto ends = [&](const char* suf) {
    std::string s(suf);
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  if (ends(".jsonl") || ends(".json")) return HistoryFormat::kJsonl;
  if (ends(".edn")) return HistoryFormat::kEdn;
  size_t i = content.find_first_not_of(" \t\r\n");
  if (i != std::string_view::npos) {
    std::string_view rest = content.substr(i);
    if (rest.rfind("INFO", 0) == 0) return HistoryFormat::kPorcupineEtcd;
    if (rest[0] == '{') {
      size_t j = rest.find_first_not_of(" \t\r\n", 1);
      if (j != std::string_view::npos && rest[j] == '"') return HistoryFormat::kJsonl;
      return HistoryFormat::kEdn;
    }
    if (rest[0] == '[' || rest[0] == '(' || rest[0] == ';' || rest[0] == '#') {
      return HistoryFormat::kEdn;
    }
  }
  if (ends(".log")) return HistoryFormat::kPorcupineEtcd;
  return HistoryFormat::kJsonl;
}

Status ParseEdnHistory(std::string_view text, const std::string& name, History* out) {
  out->clear();
  EdnReader r(text, name);
  Status s = r.SkipWs();
  if (!s.ok()) return s;
  int64_t pos = 0;
  auto one = [&]() -> Status {
    s = r.SkipWs();
    if (!s.ok()) return s;
    int line = r.line();
    nlohmann::json m;
    s = r.Value(&m, 1);
    if (!s.ok()) return s;
    Event e;
    s = EdnOpToEvent(m, name, line, pos++, &e);
    if (!s.ok()) return s;
    out->push_back(std::move(e));
    return Status::Ok();
  };
  if (!r.AtEnd() && (r.Peek() == '[' || r.Peek() == '(')) {
    char close = r.Peek() == '[' ? ']' : ')';
    r.Advance();
    while (true) {
      s = r.SkipWs();
      if (!s.ok()) return s;
      if (r.AtEnd()) return r.Err(std::string("missing '") + close + "' at the end");
      if (r.Peek() == close) {
        r.Advance();
        break;
      }
      s = one();
      if (!s.ok()) return s;
    }
    s = r.SkipWs();
    if (!s.ok()) return s;
    if (!r.AtEnd()) return r.Err("text after the history's closing bracket");
    return Status::Ok();
  }
  while (true) {
    s = r.SkipWs();
    if (!s.ok()) return s;
    if (r.AtEnd()) break;
    s = one();
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status ParsePorcupineEtcdHistory(std::string_view text, const std::string& name,
                                 History* out) {
  out->clear();
  int line = 0;
  size_t p = 0;
  while (p < text.size()) {
    size_t nl = text.find('\n', p);
    std::string_view l = text.substr(p, nl == std::string_view::npos ? text.npos : nl - p);
    p = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line;
    if (l.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    size_t dash = l.find(" - ");
    if (dash == std::string_view::npos || l.rfind("INFO", 0) != 0) {
      return LineError(name, line, "expected 'INFO  jepsen.util - PROCESS :TYPE :F VALUE'");
    }
    auto f = Fields(l.substr(dash + 3));
    if (f.size() < 3) return LineError(name, line, "expected PROCESS :TYPE :F VALUE");
    Event e;
    e.line = line;
    e.index = static_cast<int64_t>(out->size());
    e.time = Nanos(e.index);
    if (!ParseInt(f[0], &e.process) || e.process < 0) {
      return HistoryFieldError(name, line, "process", "expected a non-negative integer");
    }
    std::string_view t = f[1];
    if (t == ":invoke") e.type = EventType::kInvoke;
    else if (t == ":ok") e.type = EventType::kOk;
    else if (t == ":fail") e.type = EventType::kFail;
    else if (t == ":info") e.type = EventType::kInfo;
    else return HistoryFieldError(name, line, "type", "expected :invoke, :ok, :fail or :info");
    std::string_view fn = f[2];
    if (fn != ":read" && fn != ":write" && fn != ":cas") {
      return HistoryFieldError(name, line, "f", "expected :read, :write or :cas");
    }
    e.f = std::string(fn.substr(1));
    if (f.size() > 4) return HistoryFieldError(name, line, "value", "unexpected text after the value");
    if (f.size() == 4) {
      std::string_view v = f[3];
      if (v[0] == '[') {
        if (v.back() != ']') return HistoryFieldError(name, line, "value", "missing ']'");
        auto parts = Fields(v.substr(1, v.size() - 2));
        if (parts.size() != 2) return HistoryFieldError(name, line, "value", "expected [a b]");
        nlohmann::json a, b;
        if (!EtcdScalar(parts[0], &a) || !EtcdScalar(parts[1], &b)) {
          return HistoryFieldError(name, line, "value", "expected [a b] of integers or nil");
        }
        e.value = nlohmann::json::array({a, b});
      } else if (!EtcdScalar(v, &e.value)) {
        return HistoryFieldError(name, line, "value", "expected nil, an integer, [a b] or a keyword");
      }
    }
    out->push_back(std::move(e));
  }
  return Status::Ok();
}

Status ParseHistory(std::string_view text, HistoryFormat format, const std::string& name,
                    History* out) {
  switch (format) {
    case HistoryFormat::kJsonl: {
      ViewStreamBuf buf(text);  // reads `text` in place: a 1M-event file is 130 MB
      std::istream in(&buf);
      return ParseJsonlHistory(in, name, out);
    }
    case HistoryFormat::kEdn: return ParseEdnHistory(text, name, out);
    case HistoryFormat::kPorcupineEtcd: return ParsePorcupineEtcdHistory(text, name, out);
  }
  return Status::Usage("unknown format");
}

Status ReadHistoryFile(const std::string& path, HistoryFormat* format, bool detect,
                       History* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::BadInput(path + ": cannot open");
  // One read into a buffer of the file's size (a stringstream would copy it twice more).
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  std::string text;
  if (size > 0 && (*format == HistoryFormat::kJsonl || detect)) {
    // A lab history (jsonl) is read line by line from the file instead (ReadJsonlHistory):
    // holding the whole text beside its events was the file's size again.
    std::string head(static_cast<size_t>(std::min<std::streamoff>(size, 1 << 16)), '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    HistoryFormat f = detect ? DetectHistoryFormat(path, head) : *format;
    if (f == HistoryFormat::kJsonl) {
      *format = f;
      in.close();
      return ReadJsonlHistory(path, out);
    }
    in.seekg(0, std::ios::beg);
  }
  if (size > 0) {
    text.resize(static_cast<size_t>(size));
    in.read(text.data(), size);
    text.resize(static_cast<size_t>(in.gcount()));
  } else {  // not seekable (a pipe): read it as a stream
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  if (detect) *format = DetectHistoryFormat(path, text);
  return ParseHistory(text, *format, path, out);
}

Model DefaultModel(HistoryFormat f) {
  return f == HistoryFormat::kJsonl ? Model::kOwnerMutex : Model::kCasRegister;
}

LinearizabilityOptions FormatOptions(HistoryFormat f, LinearizabilityOptions base) {
  base.cas_fail_is_observation = f == HistoryFormat::kPorcupineEtcd;
  return base;
}

}  // namespace locklab::checker
