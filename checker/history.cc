#include "checker/history.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <climits>
#include <string_view>
#include <fstream>
#include <istream>
#include <sstream>
#include <unordered_map>

#include "base/json_limits.h"

namespace locklab::checker {
Status HistoryFieldError(const std::string& name, int line, const std::string& field,
                         const std::string& what) {
  return Status::BadField(name + ":" + std::to_string(line), field, what);
}

namespace {

bool ParseType(const std::string& s, EventType* t) {
  if (s == "invoke") *t = EventType::kInvoke;
  else if (s == "ok") *t = EventType::kOk;
  else if (s == "fail") *t = EventType::kFail;
  else if (s == "info") *t = EventType::kInfo;
  else return false;
  return true;
}

// ---- The fast path ---------------------------------------------------------------------
//
// Lab histories are millions of lines of one plain shape. Building a JSON object per line
// (a map and a string per field) was most of `locklab check`'s time on 1M events, so lines of
// that shape are read by this scanner, and only `value` goes through the JSON parser. Anything
// else (escapes, non-ASCII, floats, duplicate or missing fields, any error) makes it give up,
// and the general path decides and words the error, so the two never disagree.
class LineScanner {
 public:
  explicit LineScanner(std::string_view s) : s_(s) {}

  bool Parse(int line, Event* e) {
    bool seen[7] = {};
    e->line = line;
    e->index = line - 1;
    e->key.clear();
    e->value = nullptr;
    Ws();
    if (!Eat('{')) return false;
    Ws();
    if (Eat('}')) return false;  // no fields: the general path says which is missing
    while (true) {
      std::string_view k;
      Ws();
      if (!String(&k)) return false;
      Ws();
      if (!Eat(':')) return false;
      Ws();
      int field = k == "index" ? 0 : k == "time_ns" ? 1 : k == "process" ? 2 : k == "type" ? 3
                  : k == "f" ? 4 : k == "key" ? 5 : k == "value" ? 6 : -1;
      if (field < 0 || seen[field]) return false;  // extra or repeated: the general path
      seen[field] = true;
      std::string_view v;
      int64_t n = 0;
      switch (field) {
        case 0:
          if (Null()) break;
          if (!Integer(&n)) return false;
          e->index = n;
          break;
        case 1:
          if (!Integer(&n)) return false;
          e->time = Nanos(n);
          break;
        case 2:
          if (Peek() == '"') {
            if (!String(&v)) return false;
            if (v == "nemesis") e->process = kNemesisProcess;
            else if (v == "harness") e->process = kHarnessProcess;
            else return false;
          } else {
            if (!Integer(&n) || n < 0) return false;
            e->process = n;
          }
          break;
        case 3:
          if (!String(&v) || !ParseType(std::string(v), &e->type)) return false;
          break;
        case 4:
          if (!String(&v)) return false;
          e->f.assign(v);
          break;
        case 5:
          if (Null()) break;
          if (!String(&v)) return false;
          e->key.assign(v);
          break;
        default: {  // value: its extent, then the JSON parser
          size_t from = pos_;
          if (!Skip()) return false;
          std::string_view text = s_.substr(from, pos_ - from);
          if (text != "null") {
            e->value = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
            if (e->value.is_discarded()) return false;
          }
        }
      }
      Ws();
      if (Eat('}')) break;
      if (!Eat(',')) return false;
    }
    Ws();
    return pos_ == s_.size() && seen[1] && seen[2] && seen[3] && seen[4];
  }

 private:
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  void Ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  bool Null() {
    if (s_.substr(pos_, 4) != "null") return false;
    pos_ += 4;
    return true;
  }
  // A string of printable ASCII without escapes.
  bool String(std::string_view* out) {
    if (!Eat('"')) return false;
    size_t from = pos_;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '\\' || c < 0x20 || c >= 0x80) return false;
      ++pos_;
    }
    if (pos_ == s_.size()) return false;
    *out = s_.substr(from, pos_ - from);
    ++pos_;
    return true;
  }
  bool Integer(int64_t* out) {
    bool neg = Eat('-');
    size_t from = pos_;
    uint64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      if (v > (uint64_t(INT64_MAX) - 9) / 10) return false;  // near overflow: general path
      v = v * 10 + static_cast<uint64_t>(s_[pos_] - '0');
      ++pos_;
    }
    size_t digits = pos_ - from;
    if (digits == 0 || (digits > 1 && s_[from] == '0')) return false;
    char next = Peek();
    if (next == '.' || next == 'e' || next == 'E') return false;
    *out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return true;
  }
  // Moves past one JSON value (any kind), tracking strings and nesting; the JSON parser
  // checks it properly when it is `value`.
  bool Skip() {
    int depth = 0;
    bool in_string = false;
    size_t start = pos_;
    for (; pos_ < s_.size(); ++pos_) {
      char c = s_[pos_];
      if (in_string) {
        if (c == '\\') ++pos_;
        else if (c == '"') in_string = false;
        continue;
      }
      if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        // Past the lab's limit (the event's object is one level): the general path refuses it.
        if (++depth > kMaxJsonDepth - 1) return false;
      } else if (c == '}' || c == ']') {
        if (depth == 0) break;
        if (--depth == 0) {
          ++pos_;
          break;
        }
      } else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\r')) {
        break;
      }
    }
    return !in_string && depth == 0 && pos_ > start;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

Status ParseOne(std::string_view text, const std::string& name, int line, Event* e) {
  if (LineScanner(text).Parse(line, e)) return Status::Ok();
  // Before the JSON library sees it: it parses any depth, but copies, compares and dumps
  // recurse once per level (a `value` 100,000 arrays deep overflowed the stack).
  std::string deep_field;
  if (FirstTooDeep(text, kMaxJsonDepth, &deep_field) != std::string::npos) {
    const std::string what = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    if (deep_field.empty()) return Status::BadInput(name + ":" + std::to_string(line) + ": " + what);
    return HistoryFieldError(name, line, deep_field, what);
  }
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::BadInput(name + ":" + std::to_string(line) + ": not a JSON object");
  }
  if (!j.is_object()) {
    return Status::BadInput(name + ":" + std::to_string(line) + ": not a JSON object");
  }
  e->line = line;
  auto it = j.find("index");
  if (it == j.end() || it->is_null()) e->index = line - 1;
  else if (it->is_number_integer()) e->index = it->get<int64_t>();
  else return HistoryFieldError(name, line, "index", "expected an integer");

  it = j.find("time_ns");
  if (it == j.end()) return HistoryFieldError(name, line, "time_ns", "missing");
  if (!it->is_number_integer()) return HistoryFieldError(name, line, "time_ns", "expected an integer");
  e->time = Nanos(it->get<int64_t>());

  it = j.find("process");
  if (it == j.end()) return HistoryFieldError(name, line, "process", "missing");
  if (it->is_number_integer()) {
    e->process = it->get<int64_t>();
    if (e->process < 0) return HistoryFieldError(name, line, "process", "negative process id");
  } else if (it->is_string() && it->get<std::string>() == "nemesis") {
    e->process = kNemesisProcess;
  } else if (it->is_string() && it->get<std::string>() == "harness") {
    e->process = kHarnessProcess;
  } else {
    return HistoryFieldError(name, line, "process", "expected an integer, \"nemesis\" or \"harness\"");
  }

  it = j.find("type");
  if (it == j.end()) return HistoryFieldError(name, line, "type", "missing");
  if (!it->is_string() || !ParseType(it->get<std::string>(), &e->type)) {
    return HistoryFieldError(name, line, "type", "expected invoke, ok, fail or info");
  }
  it = j.find("f");
  if (it == j.end()) return HistoryFieldError(name, line, "f", "missing");
  if (!it->is_string()) return HistoryFieldError(name, line, "f", "expected a string");
  e->f = it->get<std::string>();

  it = j.find("key");
  if (it == j.end() || it->is_null()) e->key.clear();
  else if (it->is_string()) e->key = it->get<std::string>();
  else return HistoryFieldError(name, line, "key", "expected a string");

  it = j.find("value");
  e->value = (it == j.end()) ? nlohmann::json() : std::move(*it);
  return Status::Ok();
}

}  // namespace

const char* EventTypeName(EventType t) {
  switch (t) {
    case EventType::kInvoke: return "invoke";
    case EventType::kOk: return "ok";
    case EventType::kFail: return "fail";
    case EventType::kInfo: return "info";
  }
  return "?";
}

bool IsLockOp(const std::string& f) { return f == "acquire" || f == "release" || f == "renew"; }

std::string ProcessName(int64_t process) {
  if (process == kNemesisProcess) return "nemesis";
  if (process == kHarnessProcess) return "harness";
  return std::to_string(process);
}

namespace {

// The lines of one history, whatever they are read from: each is parsed (the scanner, else
// the JSON library), checked for a duplicate index, and appended.
class JsonlLines {
 public:
  JsonlLines(const std::string& name, History* out, bool allow_torn_tail, int* torn_line)
      : name_(name), out_(out), allow_torn_tail_(allow_torn_tail), torn_line_(torn_line) {
    out_->clear();
    if (torn_line_ != nullptr) *torn_line_ = 0;
  }

  // `unterminated`: the input's last line, without its newline. Sets *stop when the rest of
  // the input is to be ignored (a torn last line dropped).
  Status Add(std::string_view text, bool unterminated, bool* stop) {
    ++line_;
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) return Status::Ok();
    Event e;
    Status s = ParseOne(text, name_, line_, &e);
    if (!s.ok()) {
      if (allow_torn_tail_ && unterminated) {  // killed mid-write
        if (torn_line_ != nullptr) *torn_line_ = line_;
        *stop = true;
        return Status::Ok();
      }
      return s;
    }
    // The index orders events written at the same time: two with one index make that
    // order, and every "the event at index N" in a report, ambiguous. The lab writes them
    // increasing, which needs no table; the first one that is not starts one.
    if (increasing_ && (out_->empty() || e.index > out_->back().index)) {
      out_->push_back(std::move(e));
      return Status::Ok();
    }
    if (increasing_) {
      increasing_ = false;
      first_line_.reserve(out_->size() * 2);
      for (const Event& x : *out_) first_line_.emplace(x.index, x.line);
    }
    auto [it, fresh] = first_line_.emplace(e.index, line_);
    if (!fresh) {
      return HistoryFieldError(name_, line_, "index", "duplicate index " + std::to_string(e.index) +
                                                   " (also on line " + std::to_string(it->second) + ")");
    }
    out_->push_back(std::move(e));
    return Status::Ok();
  }

 private:
  const std::string& name_;
  History* out_;
  bool allow_torn_tail_;
  int* torn_line_;
  int line_ = 0;
  bool increasing_ = true;
  std::unordered_map<int64_t, int> first_line_;  // index -> the line that had it
};

}  // namespace

Status ParseJsonlHistory(std::istream& in, const std::string& name, History* out,
                         bool allow_torn_tail, int* torn_line) {
  JsonlLines lines(name, out, allow_torn_tail, torn_line);
  std::string text;
  bool stop = false;
  while (!stop && std::getline(in, text)) {
    // Read before peek(), which sets eofbit at the end of the input whether or not this
    // line ended with a newline (a whole bad last line was taken for a torn one).
    bool had_newline = !in.eof();
    bool last = in.peek() == std::char_traits<char>::eof();
    Status s = lines.Add(text, last && !had_newline, &stop);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

// The file is read in blocks of 1 MiB and split at newlines in place; only a line that spans
// two blocks is copied. A first pass counts the lines, so the events are allocated once (a
// growing vector held its old and its new storage at once: half again the history).
Status ReadJsonlHistory(const std::string& path, History* out, bool allow_torn_tail,
                        int* torn_line) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::BadInput(path + ": cannot open");
  constexpr size_t kBlock = size_t(1) << 20;
  std::unique_ptr<char[]> block(new char[kBlock]);
  auto read_block = [&](size_t* n) {
    ssize_t r;
    do {
      r = ::read(fd, block.get(), kBlock);
    } while (r < 0 && errno == EINTR);
    *n = r > 0 ? static_cast<size_t>(r) : 0;
    return r >= 0;
  };
  size_t newlines = 0, n = 0;
  bool ok = true;
  while ((ok = read_block(&n)) && n > 0) newlines += std::count(block.get(), block.get() + n, '\n');
  if (!ok || ::lseek(fd, 0, SEEK_SET) != 0) {
    ::close(fd);
    return Status::BadInput(path + ": cannot read");
  }
  out->clear();
  out->reserve(newlines + 1);
  JsonlLines lines(path, out, allow_torn_tail, torn_line);
  std::string carry;  // the start of a line the block ended inside
  bool stop = false;
  Status s;
  while (s.ok() && !stop && (ok = read_block(&n)) && n > 0) {
    const char* p = block.get();
    const char* end = p + n;
    while (s.ok() && !stop) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      if (nl == nullptr) {
        carry.append(p, end);
        break;
      }
      if (carry.empty()) {
        s = lines.Add(std::string_view(p, static_cast<size_t>(nl - p)), false, &stop);
      } else {
        carry.append(p, nl);
        s = lines.Add(carry, false, &stop);
        carry.clear();
      }
      p = nl + 1;
    }
  }
  ::close(fd);
  if (!ok) return Status::BadInput(path + ": cannot read");
  if (s.ok() && !stop && !carry.empty()) s = lines.Add(carry, true, &stop);
  return s;
}

std::string ToJsonLine(const Event& e) {
  nlohmann::ordered_json j;
  j["index"] = e.index;
  j["time_ns"] = e.time.count();
  if (e.process >= 0) j["process"] = e.process;
  else j["process"] = ProcessName(e.process);
  j["type"] = EventTypeName(e.type);
  j["f"] = e.f;
  j["key"] = e.key;
  j["value"] = e.value;
  return j.dump();
}

void SortByTimeInPlace(History* h) {
  auto earlier = [](const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.index < b.index;
  };
  if (std::is_sorted(h->begin(), h->end(), earlier)) return;
  std::vector<uint32_t> order(h->size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return earlier((*h)[a], (*h)[b]); });
  // Apply the permutation by following its cycles: position i takes the event at order[i].
  std::vector<bool> done(order.size(), false);
  for (size_t i = 0; i < order.size(); ++i) {
    if (done[i] || order[i] == i) continue;
    Event held = std::move((*h)[i]);
    size_t j = i;
    while (order[j] != i) {
      (*h)[j] = std::move((*h)[order[j]]);
      done[j] = true;
      j = order[j];
    }
    (*h)[j] = std::move(held);
    done[j] = true;
  }
}

History SortedByTime(History h) {
  std::stable_sort(h.begin(), h.end(), [](const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    return a.index < b.index;
  });
  return h;
}

}  // namespace locklab::checker
