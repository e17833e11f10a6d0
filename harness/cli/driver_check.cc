#include "harness/cli/driver_check.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "base/argv.h"
#include "base/clock.h"
#include "base/exit_code.h"
#include "base/process_tree.h"
#include "base/subprocess.h"
#include "harness/lab/lab_cluster.h"
#include "locks/driver_lock.h"
#include "locks/driver_protocol.h"
#include "locks/lease_ttl.h"
#include "harness/scenario/cli_spec.h"
#include "harness/scenario/run_options.h"

extern char** environ;

namespace locklab::harness {

namespace {

using nlohmann::json;

// The lab's own rule (locks/driver_lock.h answer_grace_ms): an answer later than its timeout
// plus this is killed (--answer-grace).
constexpr Millis kDefaultAnswerGrace{250};
// How long past the grace the check still reads, to tell a late answer from none at all.
constexpr Millis kReadSlack{2000};
// How long a driver at a point must stay silent before its go (a driver that goes on without
// it answers within this on a busy machine too; the requests' timeouts leave room for it).
constexpr Millis kPointHold{1000};
// After stdin closes, the lab kills a driver after 500 ms; the check allows a busy machine
// (a JVM closing its ZooKeeper session) more: a driver that ignores EOF never exits.
constexpr Millis kExitWait{5000};


struct CheckOptions {
  std::string path;  // absolute
  std::vector<std::string> args;
  Millis ttl{locks::kDefaultLeaseTtl};
  Millis start_timeout = locks::kDefaultDriverStartTimeout;
  Millis answer_grace = kDefaultAnswerGrace;
  bool verbose = false;
  bool trace = false;
};

// One answer as the check saw it.
struct Answer {
  bool answered = false;   // a well-formed answer to this request came
  std::string error;       // else (or a protocol error): what the driver did
  json body;               // the answer object
  std::string outcome;     // ok / fail / unknown
  Millis took{0};          // from the request to the answer
  Millis timeout{0};       // its timeout_ms
  bool late() const { return answered && took > timeout; }
  std::string token() const {
    return body.contains("token") && body["token"].is_string() ? body["token"].get<std::string>() : "";
  }
  int64_t fence() const {
    return body.contains("fence") && body["fence"].is_number_integer() ? body["fence"].get<int64_t>() : -1;
  }
  std::string Describe() const {
    if (!answered) return error;
    std::string d = "'" + outcome + "'";
    if (body.contains("detail") && body["detail"].is_string()) {
      d += " (" + locks::LineExcerpt(body["detail"].get<std::string>(), 80) + ")";
    }
    return d;
  }
};

// How bad a failed case is, said on its FAIL line and explained once at the end: a library
// that lets two clients in is not one that only gives no answer the lab can read.
enum class Grade {
  kUnsafe,     // the case showed a second holder, or a holder's key freed by another's release
  kNoOutcome,  // no answer the lab can read (unknown, or none in time) where ok or fail is due
  kWrong,      // a definite answer, not the one the protocol asks for
  kProtocol,   // the driver broke the protocol itself (hello, answer shape, time, stdout)
};
const char* GradeWord(Grade g) {
  switch (g) {
    case Grade::kUnsafe: return "unsafe";
    case Grade::kNoOutcome: return "no outcome";
    case Grade::kWrong: return "wrong";
    case Grade::kProtocol: return "protocol";
  }
  return "wrong";
}
const char* GradeMeaning(Grade g) {
  switch (g) {
    case Grade::kUnsafe: return "the case showed two holders of one key, or a holder's key freed by another's release";
    case Grade::kNoOutcome: return "the driver gave no answer the lab can read (unknown, or none in time) where its lock must say ok or fail";
    case Grade::kWrong: return "a definite answer, but not the one the protocol asks for";
    case Grade::kProtocol: return "the driver broke the protocol itself (its hello, an answer's shape or time, stdout)";
  }
  return "";
}
// The grade of a failed case by its name (the cases whose failure is a safety breach, and
// the protocol's own); the rest are wrong answers, or no outcome when no answer came.
Grade CaseGrade(const std::string& name) {
  static const std::set<std::string> unsafe = {"acquire-held-key-fails", "release-wrong-token-keeps-lock",
                                               "stale-release-keeps-new-holder", "tokens-unique", "fences-increase"};
  static const std::set<std::string> protocol = {
      "hello",           "hello-under-probe",     "points-announced",    "point-waits-for-go", "answer-well-formed",
      "answers-in-time", "stdout-protocol-only",  "unknown-op-answered", "garbage-line-skipped",
      "exit-on-stdin-eof", "acquire-ok-fields",   "renew-ok-fields"};
  if (unsafe.count(name)) return Grade::kUnsafe;
  if (protocol.count(name)) return Grade::kProtocol;
  return Grade::kWrong;
}

// The checks' findings, by case name, in the order first met.
class Cases {
 public:
  void Pass(const std::string& name) { Note(name, true, "", CaseGrade(name)); }
  void Fail(const std::string& name, const std::string& why) { Note(name, false, why, CaseGrade(name)); }
  void Fail(const std::string& name, const std::string& why, Grade grade) { Note(name, false, why, grade); }
  void Expect(const std::string& name, bool ok, const std::string& why) {
    Note(name, ok, ok ? "" : why, CaseGrade(name));
  }
  void Skip(const std::string& name, const std::string& why) {
    if (!results_.count(name)) order_.push_back(name);
    skipped_[name] = why;
    results_.emplace(name, Result{true, {}});
  }
  bool failed() const {
    for (const auto& [n, r] : results_) {
      if (!r.ok) return true;
    }
    return false;
  }
  int Print(bool verbose) const {
    int failed = 0, skipped = 0;
    std::map<Grade, int> graded;
    for (const auto& name : order_) {
      const Result& r = results_.at(name);
      auto sk = skipped_.find(name);
      if (!r.ok) {
        ++failed;
        ++graded[r.grade];
        for (const auto& why : r.why) std::cout << "FAIL " << name << ": " << GradeWord(r.grade) << ": " << why << "\n";
      } else if (sk != skipped_.end()) {
        ++skipped;
        if (verbose) std::cout << "skip " << name << ": " << sk->second << "\n";
      } else if (verbose) {
        std::cout << "ok   " << name << "\n";
      }
    }
    for (const auto& [grade, n] : graded) std::cout << GradeWord(grade) << ": " << GradeMeaning(grade) << "\n";
    std::string grades;
    for (const auto& [grade, n] : graded) grades += (grades.empty() ? " (" : ", ") + std::to_string(n) + " " + GradeWord(grade);
    std::cout << "driver-check: " << order_.size() << " cases, " << order_.size() - failed - skipped
              << " passed, " << failed << " failed" << (grades.empty() ? "" : grades + ")") << ", " << skipped << " skipped\n";
    return failed;
  }

 private:
  struct Result {
    bool ok = true;
    std::vector<std::string> why;
    Grade grade = Grade::kWrong;  // of its worst failure (the enum's order)
  };
  void Note(const std::string& name, bool ok, const std::string& why, Grade grade) {
    auto it = results_.find(name);
    if (it == results_.end()) {
      order_.push_back(name);
      it = results_.emplace(name, Result{}).first;
    }
    skipped_.erase(name);
    if (!ok) {
      if (it->second.ok || grade < it->second.grade) it->second.grade = grade;
      it->second.ok = false;
      if (it->second.why.size() < 3) it->second.why.push_back(why);
    }
  }
  std::vector<std::string> order_;
  std::map<std::string, Result> results_;
  std::map<std::string, std::string> skipped_;
};

// One driver process as a client runs it (locks/driver_lock.cc), with every line it prints
// held up to the protocol.
class CheckedDriver {
 public:
  CheckedDriver(std::string name, const CheckOptions& o, Cases* cases, std::string log_dir)
      : name_(std::move(name)), o_(o), cases_(cases), log_dir_(std::move(log_dir)), reader_(65536) {}
  ~CheckedDriver() { Kill(); }

  const std::string& name() const { return name_; }
  const locks::DriverHello& hello() const { return hello_; }
  bool running() const { return child_.pid() > 0; }
  const std::set<std::string>& points_reached() const { return points_reached_; }

  // Starts it with `env` and reads its hello: "" or why it did not say one.
  std::string Start(const std::map<std::string, std::string>& env) {
    Kill();
    env_ = env;
    SubprocessOptions so;
    so.argv = {o_.path};
    so.argv.insert(so.argv.end(), o_.args.begin(), o_.args.end());
    so.env = env;
    // As a client does: the caller's own LOCKLAB_ variables are none of the driver's business.
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string name(*e, strcspn(*e, "="));
      if (name.rfind("LOCKLAB_", 0) == 0 && !env.count(name)) so.unset_env.push_back(name);
    }
    so.stdin_stream = StdStream::Pipe();
    so.stdout_stream = StdStream::Pipe();
    so.stderr_stream = StdStream::LogFile();
    so.log_path = log_dir_ + "/driver-" + name_ + ".log";
    so.own_process_group = true;  // stopped and killed as a group, like a client's
    so.death_signal = SIGKILL;
    so.close_other_fds = true;
    Status s = Subprocess::Spawn(so, &child_);
    if (!s.ok()) return "cannot start: " + s.message();
    reader_.Clear();
    std::string line, why;
    locks::DriverLineReader::Result r;
    const Nanos until = MonotonicNow() + o_.start_timeout;
    do {
      r = ReadLine(until, &line, &why);
    } while (r == locks::DriverLineReader::Result::kLine && locks::IsBlankLine(line));
    if (r == locks::DriverLineReader::Result::kTimeout) {
      return "no hello line within " + std::to_string(o_.start_timeout.count()) + " ms";
    }
    if (r == locks::DriverLineReader::Result::kEof) return "it closed its stdout before its hello (" + Ended() + ")";
    if (r == locks::DriverLineReader::Result::kError) return why;
    return locks::CheckHello(line, &hello_);
  }

  // Sends `request` (id and timeout_ms added) and reads its answer, answering point lines.
  Answer Call(json request, Millis timeout) {
    Answer a;
    a.timeout = timeout;
    if (!running()) {
      // Killed after a broken answer: a fresh one, as the lab starts (its hello first).
      std::string bad = Start(env_);
      if (!bad.empty()) {
        cases_->Fail("hello", "driver " + name_ + " restarted: " + bad);
        a.error = "the restarted driver said no hello: " + bad;
        return a;
      }
    }
    Unsolicited("before request " + std::to_string(next_id_ + 1));
    request["id"] = ++next_id_;
    request["timeout_ms"] = timeout.count();
    const Nanos sent = MonotonicNow();
    std::string unsent = Write(request.dump() + "\n", sent + timeout + o_.answer_grace);
    if (!unsent.empty()) {
      a.error = unsent;
      Kill();
      return a;
    }
    Nanos read_until = sent + timeout + o_.answer_grace + kReadSlack;
    const std::string what = "request " + std::to_string(next_id_) + " " + request.value("op", std::string());
    for (;;) {
      std::string line, why;
      auto r = ReadLine(read_until, &line, &why);
      if (r == locks::DriverLineReader::Result::kTimeout) {
        a.error = "no answer to " + what + " within its timeout_ms " + std::to_string(timeout.count()) +
                  " + " + std::to_string((o_.answer_grace + kReadSlack).count()) + " ms";
        Kill();
        return a;
      }
      if (r == locks::DriverLineReader::Result::kEof) {
        a.error = "the driver ended during " + what + " (" + Ended() + ")";
        Kill();
        return a;
      }
      if (r == locks::DriverLineReader::Result::kError) {
        a.error = why;
        Kill();
        return a;
      }
      if (locks::IsBlankLine(line)) continue;
      if (locks::IsPointLine(line)) {
        std::string point;
        std::string bad = locks::CheckPointLine(line, hello_.points, &point);
        if (!bad.empty()) {
          cases_->Fail("points-announced", bad);
          a.error = bad;
          Kill();
          return a;
        }
        cases_->Pass("points-announced");
        points_reached_.insert(point);
        // At a point the driver waits for its go: anything it prints meanwhile is not waiting.
        std::string early;
        // (At most a third of the request's timeout: a correct driver still answers in time.)
        const Millis hold = std::min(kPointHold, timeout / 3);
        auto w = ReadLine(MonotonicNow() + hold, &early, &why);
        if (w == locks::DriverLineReader::Result::kLine) {
          cases_->Fail("point-waits-for-go", "at point '" + point + "' it printed '" + locks::LineExcerpt(early, 80) +
                                                 "' before the go");
          a.error = "went on past point '" + point + "' without the go";
          Kill();
          return a;
        }
        cases_->Pass("point-waits-for-go");
        read_until += hold;
        std::string unsent = Write(locks::PointGoLine(point), read_until);
        if (!unsent.empty()) {
          a.error = unsent;
          Kill();
          return a;
        }
        continue;
      }
      std::string bad = locks::CheckAnswer(line, next_id_, &a.body, &a.outcome);
      a.took = std::chrono::ceil<Millis>(MonotonicNow() - sent);
      if (!bad.empty()) {
        cases_->Fail("answer-well-formed", bad + " (to " + what + ")");
        a.error = bad;
        Kill();  // the lab kills it too: its next answers cannot be trusted
        return a;
      }
      cases_->Pass("answer-well-formed");
      a.answered = true;
      if (a.took > timeout + o_.answer_grace) {
        cases_->Fail("answers-in-time", what + " (timeout_ms " + std::to_string(timeout.count()) + ") answered " +
                                            std::to_string(a.took.count()) + " ms after it was sent, past the grace of " +
                                            std::to_string(o_.answer_grace.count()) + " ms (the lab kills the driver)");
      } else {
        cases_->Pass("answers-in-time");
      }
      return a;
    }
  }

  // The reads and writes, traced with --trace.
  locks::DriverLineReader::Result ReadLine(Nanos until, std::string* line, std::string* why) {
    auto r = reader_.Read(child_.stdout_pipe(), until, line, why);
    if (o_.trace && r == locks::DriverLineReader::Result::kLine) std::cerr << name_ << " > " << *line << "\n";
    if (o_.trace && r == locks::DriverLineReader::Result::kEof) std::cerr << name_ << " > (EOF)\n";
    return r;
  }
  std::string Write(const std::string& bytes, Nanos until) {
    if (o_.trace) std::cerr << name_ << " < " << bytes.substr(0, bytes.size() - 1) << "\n";
    return locks::WriteLine(child_.stdin_pipe(), bytes, until);
  }

  // Lines printed while no request is pending: the protocol has none.
  void Unsolicited(const std::string& when, Millis wait = Millis(0)) {
    if (!running()) return;
    std::string line, why;
    const Nanos until = MonotonicNow() + wait;
    while (ReadLine(until, &line, &why) == locks::DriverLineReader::Result::kLine) {
      if (locks::IsBlankLine(line)) continue;
      cases_->Fail("stdout-protocol-only",
                   "driver " + name_ + " printed '" + locks::LineExcerpt(line, 80) + "' " + when +
                       " (stdout is for protocol lines; log on stderr)");
      return;
    }
    cases_->Pass("stdout-protocol-only");
  }

  // Writes raw bytes to its stdin (lines that are not requests): "" or why not.
  std::string Raw(const std::string& bytes) {
    if (!running()) return "the driver is not running";
    return Write(bytes, MonotonicNow() + Millis(1000));
  }

  void Stop() {
    if (running()) kill(-child_.pid(), SIGSTOP);
  }
  void Continue() {
    if (running()) kill(-child_.pid(), SIGCONT);
  }

  // Closes stdin: true when it exited within `wait`.
  bool CloseAndWait(Millis wait) {
    CloseStdin();
    return WaitAndKill(MonotonicNow() + wait);
  }
  void CloseStdin() {
    if (running()) child_.CloseStdin();
  }
  // True when it exited by `until`; killed either way.
  bool WaitAndKill(Nanos until) {
    if (!running()) return true;
    bool exited = child_.WaitExit(std::chrono::ceil<Millis>(std::max(Nanos(0), until - MonotonicNow())));
    Kill();
    return exited;
  }

  void Kill() {
    if (child_.pid() > 0) {
      KillTree(child_.pid(), /*include_root=*/false);
      child_.Reset();
    }
    reader_.Clear();
  }

 private:
  std::string Ended() {
    int status = 0;
    if (child_.pid() > 0 && child_.WaitExit(Millis(200), &status)) return "it " + DescribeWaitStatus(status);
    return "its stdout closed";
  }

  std::string name_;
  const CheckOptions& o_;
  Cases* cases_;
  std::string log_dir_;
  Subprocess child_;
  locks::DriverLineReader reader_;
  locks::DriverHello hello_;
  int64_t next_id_ = 1000;  // not the lab's numbering: a driver must echo, not count
  std::set<std::string> points_reached_;
  std::map<std::string, std::string> env_;  // what it was started with (a restart reuses it)
};

json Req(const std::string& op, const std::string& key) { return {{"op", op}, {"key", key}}; }

std::string Ms(Millis d) { return std::to_string(d.count()) + " ms"; }

class DriverCheck {
 public:
  DriverCheck(CheckOptions o, std::string dir) : o_(std::move(o)), dir_(std::move(dir)) {}

  int Run() {
    // The probe first, as `locklab run` does before any server exists.
    locks::DriverHello probed;
    Status ps = locks::ProbeDriver(o_.path, o_.args, o_.start_timeout, &probed);
    if (ps.ok()) {
      cases_.Pass("hello-under-probe");
    } else {
      cases_.Fail("hello-under-probe", ps.message() +
                                           " (started with LOCKLAB_PROBE=1 and LOCKLAB_NODES on a closed port, "
                                           "it must still say hello)");
      if (ps.code() == Status::Code::kUsage) return Finish();  // its hello itself is wrong
    }
    const locks::Backend backend = ps.ok() ? probed.backend : locks::Backend::kRedis;
    const int nodes = ps.ok() && probed.nodes ? *probed.nodes : 1;
    LabPaths paths;
    Status s = LabPaths::Discover(&paths);
    if (s.ok()) {
      cluster_ = std::make_unique<LabCluster>(dir_ + "/nodes", paths);
      std::cerr << "driver-check: starting " << nodes << " lab " << locks::BackendName(backend) << " node(s)\n";
      s = cluster_->Start(nodes, false, {}, backend);
    }
    if (!s.ok()) {
      std::cerr << "locklab driver-check: " << s.message() << "\n";
      return kExitInfrastructure;
    }
    for (const auto& e : cluster_->lock_endpoints()) nodes_ += (nodes_.empty() ? "" : ",") + e.ToString();

    A_ = Make("A");
    if (std::string bad = A_->Start(Env(1)); !bad.empty()) {
      cases_.Fail("hello", bad);
      return Finish();
    }
    cases_.Pass("hello");
    const locks::DriverHello& h = A_->hello();
    ttl_ = h.ttl.value_or(o_.ttl);
    A_->Unsolicited("right after its hello", Millis(200));
    B_ = Make("B");
    if (std::string bad = B_->Start(Env(2)); !bad.empty()) {
      cases_.Fail("hello", "a second driver: " + bad);
      return Finish();
    }

    AcquireAndRelease();
    Statelessness();
    if (h.renew) Renewals();
    else cases_.Skip("renew-owned-ok", "the hello says renew: false");
    OddRequests();
    PausedHolder();
    StoppedServer();
    if (h.resource) Resource();
    PointsReached(h);
    Exits();
    return Finish();
  }

 private:
  std::unique_ptr<CheckedDriver> Make(const std::string& name) {
    return std::make_unique<CheckedDriver>(name, o_, &cases_, dir_);
  }

  std::map<std::string, std::string> Env(int process, const std::string& nodes = "") {
    return {{"LOCKLAB_DRIVER_PROTOCOL", std::to_string(locks::kDriverProtocolVersion)},
            {"LOCKLAB_NODES", nodes.empty() ? nodes_ : nodes},
            {"LOCKLAB_TTL_MS", std::to_string(o_.ttl.count())},
            {"LOCKLAB_RETRY_DELAY_MS", "20"},
            {"LOCKLAB_CONNECT_TIMEOUT_MS", "200"},
            {"LOCKLAB_COMMAND_TIMEOUT_MS", "200"},
            {"LOCKLAB_PROCESS", std::to_string(process)}};
  }

  Answer Acquire(CheckedDriver& d, const std::string& key, Millis timeout, std::optional<Millis> ttl = std::nullopt) {
    json r = Req("acquire", key);
    r["ttl_ms"] = ttl.value_or(ttl_).count();
    Answer a = d.Call(r, timeout);
    if (a.answered && a.outcome == "ok") {
      cases_.Expect("acquire-ok-fields", !a.token().empty(),
                    "acquire answered ok without a non-empty string 'token'");
      cases_.Expect("acquire-ok-fields", locks::IsValidCount(a.body, "fence") && locks::IsValidCount(a.body, "validity_ms"),
                    "acquire ok: 'fence' and 'validity_ms' must be integers >= 0: " + a.body.dump());
    }
    return a;
  }
  Answer Release(CheckedDriver& d, const std::string& key, const std::string& token, int64_t fence = -1) {
    json r = Req("release", key);
    r["token"] = token;
    if (fence >= 0) r["fence"] = fence;
    return d.Call(r, Millis(2000));
  }
  Answer Renew(CheckedDriver& d, const std::string& key, const std::string& token, Millis ttl) {
    json r = Req("renew", key);
    r["token"] = token;
    r["ttl_ms"] = ttl.count();
    return d.Call(r, Millis(2000));
  }

  // A request repeated while its answer is unknown (a client that just woke from a stop is
  // still reconnecting: unknown is its honest answer), at most 4 times, 1 s apart.
  template <typename Fn>
  Answer Settled(Fn call) {
    Answer a;
    for (int i = 0; i < 4; ++i) {
      if (i > 0) SleepFor(Millis(1000));
      a = call();
      if (!a.answered || a.outcome != "unknown") break;
    }
    return a;
  }

  // `a` must be `want`; else a failed case saying what came.
  void Want(const std::string& name, const Answer& a, const std::string& want, const std::string& what) {
    if (a.answered && a.outcome == want) {
      cases_.Pass(name);
    } else if (!a.answered || a.outcome == "unknown") {
      cases_.Fail(name, what + ": got " + a.Describe() + ", want '" + want + "'", Grade::kNoOutcome);
    } else {
      cases_.Fail(name, what + ": got " + a.Describe() + ", want '" + want + "'");
    }
  }
  // Anything but ok.
  void NotOk(const std::string& name, const Answer& a, const std::string& what) {
    if (a.answered && a.outcome == "ok") cases_.Fail(name, what + ": answered 'ok'");
    else cases_.Pass(name);
  }

  void AcquireAndRelease() {
    const std::string k = "lock:check-1";
    Answer a1 = Acquire(*A_, k, Millis(3000), Millis(30000));
    Want("acquire-free-key-ok", a1, "ok", "acquire of a free key");
    if (a1.outcome != "ok") return;
    // A second client's driver, while A holds the key: every attempt is refused until the
    // deadline, so the one right answer is fail, in time.
    Answer b1 = Acquire(*B_, k, Millis(1000), Millis(30000));
    if (b1.answered && b1.outcome == "ok") {
      cases_.Fail("acquire-held-key-fails", "granted a key another driver holds: two holders");
    } else {
      Want("acquire-held-key-fails", b1, "fail", "acquire of a key another driver holds (refused until the deadline)");
    }
    // A token of the real one's shape (a ZooKeeper driver's is a node path), owning nothing.
    const std::string wrong = a1.token() + "0";
    Answer w = Release(*B_, k, wrong);
    Want("release-wrong-token-fails", w, "fail", "release with a token that does not own the key");
    Answer still = Acquire(*B_, k, Millis(600), Millis(30000));
    NotOk("release-wrong-token-keeps-lock", still, "after a release with a wrong token, another acquire");
    Answer r1 = Release(*A_, k, a1.token(), a1.fence());
    Want("release-owned-ok", r1, "ok", "release by the owner");
    Answer b2 = Acquire(*B_, k, Millis(3000), Millis(30000));
    Want("acquire-after-release-ok", b2, "ok", "acquire after the holder released");
    if (b2.outcome != "ok") return;
    cases_.Expect("tokens-unique", b2.token() != a1.token(),
                  "two grants of the same key carry the same token '" + a1.token() +
                      "' (a late release by the first holder would free the second's lock)");
    if (a1.fence() >= 0 && b2.fence() >= 0) {
      cases_.Expect("fences-increase", b2.fence() > a1.fence(),
                    "the second grant's fence " + std::to_string(b2.fence()) + " is not above the first's " +
                        std::to_string(a1.fence()));
    }
    Answer again = Release(*A_, k, a1.token(), a1.fence());
    Want("release-twice-fails", again, "fail", "a second release of a token already released (the key has another holder)");
    Answer keeps = Acquire(*A_, k, Millis(600), Millis(30000));
    NotOk("stale-release-keeps-new-holder", keeps, "after a stale release, an acquire of the new holder's key");
    held_key_ = k;
    held_ = b2;
  }

  // release works in a driver process that did not do the acquire (a restarted driver).
  void Statelessness() {
    if (held_.outcome != "ok") return;
    C_ = Make("C");
    if (std::string bad = C_->Start(Env(3)); !bad.empty()) {
      cases_.Fail("hello", "a third driver: " + bad);
      return;
    }
    Answer r = Release(*C_, held_key_, held_.token(), held_.fence());
    Want("release-from-fresh-driver", r, "ok",
         "release by a fresh driver process given the key and token (drivers are restarted: no state across "
         "requests)");
    Answer a = Acquire(*A_, held_key_, Millis(3000), Millis(30000));
    Want("acquire-after-release-ok", a, "ok", "acquire after a fresh driver released the key");
    if (a.outcome == "ok") Release(*A_, held_key_, a.token(), a.fence());
    held_ = Answer();
  }

  void Renewals() {
    const std::string k = "lock:check-renew";
    Answer a = Acquire(*A_, k, Millis(3000), Millis(30000));
    if (a.outcome != "ok") return;
    Answer r = Renew(*A_, k, a.token(), Millis(30000));
    Want("renew-owned-ok", r, "ok", "renew by the owner");
    if (r.answered && r.outcome == "ok") {
      cases_.Expect("renew-ok-fields", locks::IsValidCount(r.body, "validity_ms"),
                    "renew ok: 'validity_ms' must be an integer >= 0: " + r.body.dump());
    }
    Answer w = Renew(*B_, k, a.token() + "0", Millis(30000));
    Want("renew-wrong-token-fails", w, "fail", "renew with a token that does not own the key");
    Release(*A_, k, a.token(), a.fence());
  }

  // Requests a driver must survive: an unknown op, garbage, blank lines, fields it does not know.
  void OddRequests() {
    Answer u = A_->Call(Req("locklab-check-unknown-op", "lock:check-odd"), Millis(1000));
    if (!u.answered) cases_.Fail("unknown-op-answered", "an unknown op: " + u.error);
    else NotOk("unknown-op-answered", u, "an unknown op");
    if (!A_->hello().renew) {
      json r = Req("renew", "lock:check-odd");
      r["token"] = "x";
      r["ttl_ms"] = ttl_.count();
      Answer n = A_->Call(r, Millis(1000));
      if (!n.answered) cases_.Fail("unknown-op-answered", "renew (its hello says renew: false): " + n.error);
      else NotOk("unknown-op-answered", n, "renew to a driver whose hello says renew: false");
    }
    // Garbage and a blank line: skipped (logged), the next request answered as usual.
    std::string unsent = A_->Raw("this is not json\n\n");
    json r = Req("release", "lock:check-odd");
    r["token"] = "/locklab-check-not-the-owner";
    r["x-locklab-check"] = {{"nested", {1, 2, 3}}};  // a field the protocol does not list
    Answer g = A_->Call(r, Millis(2000));
    if (!unsent.empty()) {
      cases_.Fail("garbage-line-skipped", unsent);
    } else if (!g.answered) {
      cases_.Fail("garbage-line-skipped", "after a line that is not JSON and a request with an extra field: " + g.error);
    } else {
      Want("garbage-line-skipped", g, "fail", "a release with a wrong token after a garbage line (extra fields are ignored)");
    }
  }

  // A holder stopped (a GC pause) past its lease: another client gets the key, and the old
  // holder's renew and release are refused without touching the new holder's lock.
  void PausedHolder() {
    const std::string k = "lock:check-pause";
    Answer a = Acquire(*A_, k, Millis(3000));
    if (a.outcome != "ok") {
      cases_.Fail("paused-holder-expires", "acquire of a free key: got " + a.Describe());
      return;
    }
    A_->Stop();
    SleepFor(ttl_ + Millis(1500));
    Answer b = Acquire(*B_, k, 3 * ttl_ + Millis(4000), Millis(30000));
    A_->Continue();
    Want("paused-holder-expires", b, "ok",
         "acquire while the holder is stopped " + Ms(ttl_ + Millis(1500)) + " past a " + Ms(ttl_) + " TTL");
    if (b.outcome != "ok") {
      return;
    }
    if (a.fence() >= 0 && b.fence() >= 0) {
      cases_.Expect("fences-increase", b.fence() > a.fence(),
                    "the fence of the grant after the pause (" + std::to_string(b.fence()) +
                        ") is not above the paused holder's (" + std::to_string(a.fence()) + ")");
    }
    if (A_->hello().renew) {
      Answer rn = Settled([&] { return Renew(*A_, k, a.token(), Millis(30000)); });
      Want("renew-after-expiry-fails", rn, "fail", "renew by the holder whose lease expired while it was stopped");
    }
    Answer rl = Settled([&] { return Release(*A_, k, a.token(), a.fence()); });
    Want("stale-release-fails", rl, "fail", "release by the holder whose lease expired while it was stopped");
    Answer c = Settled([&] { return Acquire(*A_, k, Millis(600), Millis(30000)); });
    NotOk("stale-release-keeps-new-holder", c, "after the stopped holder's release, an acquire of the new holder's key");
    Release(*B_, k, b.token(), b.fence());
  }

  // Every lock server stopped (SIGSTOP): the commands are sent and never answered, so the one
  // right outcome is unknown (they may yet take effect), in time; never fail, never ok.
  // A fresh driver, so that its connection is up and the command is sent (a client that
  // knows it is disconnected may rightly answer fail: nothing was sent).
  void StoppedServer() {
    auto d = Make("D");
    if (std::string bad = d->Start(Env(4)); !bad.empty()) {
      cases_.Fail("hello", "a fourth driver: " + bad);
      return;
    }
    for (auto& n : cluster_->nodes()) n->Signal(SIGSTOP);
    Answer a = Acquire(*d, "lock:check-stopped", Millis(1500));
    for (auto& n : cluster_->nodes()) n->Signal(SIGCONT);
    d->CloseAndWait(kExitWait);
    if (!a.answered) {
      cases_.Fail("server-stopped-unknown", "acquire while the lock servers are stopped: " + a.error);
    } else if (a.outcome == "fail") {
      cases_.Fail("server-stopped-unknown",
                  "acquire while the lock servers are stopped (sent, never answered) answered 'fail'" +
                      (a.body.contains("detail") ? " (" + a.Describe() + ")" : std::string()) +
                      ": a timeout is unknown, never fail (the command may still take effect)");
    } else {
      Want("server-stopped-unknown", a, "unknown", "acquire while the lock servers are stopped");
    }
  }

  // A driver whose hello says "resource": true does the critical section's write: read and
  // work on its own resource.
  void Resource() {
    const std::string lock = "lock:check-resource", counter = "counter:check-resource";
    Answer a = Acquire(*A_, lock, Millis(3000), Millis(30000));
    if (a.outcome != "ok") {
      cases_.Fail("resource-read-work", "acquire for the resource cases: got " + a.Describe());
      return;
    }
    Answer r = A_->Call({{"op", "read"}, {"key", counter}, {"lock", lock}, {"token", a.token()}}, Millis(2000));
    const bool read_ok = r.answered && r.outcome == "ok" && r.body.contains("value") &&
                         (r.body["value"].is_null() || r.body["value"].is_number_integer());
    cases_.Expect("resource-read-work", read_ok,
                  "read of the resource: want 'ok' with an integer or null 'value', got " + r.Describe() + " " +
                      r.body.dump());
    if (read_ok) {
      const int64_t next = (r.body["value"].is_null() ? 0 : r.body["value"].get<int64_t>()) + 1;
      json w = {{"op", "work"}, {"key", counter}, {"lock", lock}, {"token", a.token()}, {"value", next}};
      if (a.fence() >= 0) w["fence"] = a.fence();
      Answer wa = A_->Call(w, Millis(2000));
      cases_.Expect("resource-read-work", wa.answered && wa.outcome == "ok" && wa.body.value("value", json()) == next,
                    "work writing " + std::to_string(next) + " as the holder: want 'ok' with that 'value', got " +
                        wa.Describe() + " " + wa.body.dump());
      Answer r2 = A_->Call({{"op", "read"}, {"key", counter}}, Millis(2000));
      cases_.Expect("resource-read-work", r2.answered && r2.outcome == "ok" && r2.body.value("value", json()) == next,
                    "read after the work: want 'ok' with 'value' " + std::to_string(next) + ", got " + r2.Describe() +
                        " " + r2.body.dump());
    }
    Release(*A_, lock, a.token(), a.fence());
  }

  void PointsReached(const locks::DriverHello& h) {
    std::set<std::string> reached = A_->points_reached();
    for (const auto& p : B_->points_reached()) reached.insert(p);
    if (C_) {
      for (const auto& p : C_->points_reached()) reached.insert(p);
    }
    for (const auto& p : h.points) {
      if (!reached.count(p)) {
        std::cerr << "driver-check: note: point '" << p
                  << "' was announced but never reached by these requests (a fault armed there never bites "
                     "if the lock never reaches it)\n";
      }
    }
  }

  void Exits() {
    A_->Unsolicited("after its last answer", Millis(300));
    // All at once, so that the wait is one kExitWait however many there are.
    std::vector<CheckedDriver*> running;
    for (auto* d : {A_.get(), B_.get(), C_.get()}) {
      if (d != nullptr && d->running()) running.push_back(d);
    }
    for (auto* d : running) d->CloseStdin();
    const Nanos until = MonotonicNow() + kExitWait;
    for (auto* d : running) {
      cases_.Expect("exit-on-stdin-eof", d->WaitAndKill(until),
                    "driver " + d->name() + " still ran " + Ms(kExitWait) + " after its stdin closed");
    }
  }

  int Finish() {
    for (auto* d : {A_.get(), B_.get(), C_.get()}) {
      if (d != nullptr) d->Kill();
    }
    if (cluster_) cluster_->Stop();
    int failed = cases_.Print(o_.verbose);
    if (failed > 0) {
      std::cout << "driver-check: the drivers' stderr: " << dir_ << "/driver-*.log\n";
      return kExitViolated;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    return kExitOk;
  }

  CheckOptions o_;
  std::string dir_;
  Cases cases_;
  std::unique_ptr<LabCluster> cluster_;
  std::string nodes_;
  Millis ttl_{locks::kDefaultLeaseTtl};
  std::unique_ptr<CheckedDriver> A_, B_, C_;
  std::string held_key_;
  Answer held_;
};

}  // namespace

int RunDriverCheckCommand(const std::vector<std::string>& args) {
  CheckOptions o;
  std::string lock;
  ArgvReader r(DriverCheckCommandSpec(), args);
  while (r.Next()) {
    Status s;
    if (r.AtHelp()) {
      std::cout << HelpText(DriverCheckCommandSpec());
      return kExitOk;
    } else if (r.Is("--lock")) {
      s = r.Value(&lock);
    } else if (r.Is("--driver-arg")) {
      std::string v;
      s = r.Value(&v);
      o.args.push_back(v);
    } else if (r.Is("--ttl")) {
      s = r.Duration(locks::kMinLeaseTtl, locks::kMaxLeaseTtl, &o.ttl);
    } else if (r.Is("--start-timeout")) {
      s = r.Duration(Millis(100), Millis(600000), &o.start_timeout);
    } else if (r.Is("--answer-grace")) {
      s = r.Duration(Millis(0), Millis(60000), &o.answer_grace);
    } else if (r.Is("--verbose")) {
      s = r.NoValue();
      o.verbose = true;
    } else if (r.Is("--trace")) {
      s = r.NoValue();
      o.trace = true;
    } else {
      s = r.Unknown();
    }
    if (!s.ok()) {
      std::cerr << "locklab " << s.message() << "\n";
      return s.ExitCode();
    }
  }
  if (lock.empty()) {
    std::cerr << "locklab driver-check: flag --lock driver:PATH is required\n";
    return kExitUsage;
  }
  if (!locks::IsDriverId(lock)) {
    std::cerr << "locklab driver-check: flag --lock: '" << lock << "' is not a driver:PATH lock\n";
    return kExitUsage;
  }
  Status s = ResolveDriverPath(lock, &o.path);
  if (!s.ok()) {
    std::cerr << "locklab driver-check: flag --lock: " << s.message() << "\n";
    return kExitUsage;
  }
  const char* base = getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/locklab-driver-check-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    std::cerr << "locklab driver-check: cannot make a directory " << pattern << "\n";
    return kExitIo;
  }
  DriverCheck check(o, buf.data());
  return check.Run();
}

}  // namespace locklab::harness
