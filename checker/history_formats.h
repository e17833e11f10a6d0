// Readers for histories written by other tools, into the native History (history.h).
//
// * Jepsen / Knossos EDN: a vector or list of maps (or maps one after another, as Jepsen's
//   history.edn), each with :process :type :f :value; extra keys, `;` comments, `#_` discards,
//   tagged literals (#jepsen.history.Op{...}) and commas are accepted. :process :nemesis maps to
//   kNemesisProcess. Keywords become strings without the colon; `nil` becomes null.
// * Porcupine's etcd logs (`INFO  jepsen.util - 3\t:ok\t:read\t2`), tabs or spaces; values
//   nil, integers, [a b] or a keyword (:timed-out).
// Neither format has times: an event's time is its position (0, 1, 2, ...); `index` likewise,
// `line` is its 1-based line, `key` is empty. What `fail` means differs (Knossos: did not
// happen; Porcupine's etcd: a failed cas ran and observed another value): FormatOptions()
// gives the LinearizabilityOptions matching each format.
//
// Readers never throw, never recurse unboundedly, and report malformed input as a one-line
// BadInput Status "NAME:LINE: field 'X': what" (or "NAME:LINE: what" for syntax errors).
// All functions are thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "checker/history.h"
#include "checker/linearizability.h"

namespace locklab::checker {

enum class HistoryFormat { kJsonl, kEdn, kPorcupineEtcd };

bool ParseHistoryFormat(const std::string& name, HistoryFormat* out);  // jsonl|edn|porcupine-etcd
const char* HistoryFormatName(HistoryFormat f);
// By extension (.jsonl/.json, .edn, .log), else by the first non-blank characters.
HistoryFormat DetectHistoryFormat(const std::string& path, std::string_view content);

Status ParseEdnHistory(std::string_view text, const std::string& name, History* out);
Status ParsePorcupineEtcdHistory(std::string_view text, const std::string& name, History* out);
Status ParseHistory(std::string_view text, HistoryFormat format, const std::string& name,
                    History* out);
// Reads the whole file; `*format` is detected unless `detect` is false.
Status ReadHistoryFile(const std::string& path, HistoryFormat* format, bool detect,
                       History* out);

// Default model per format: cas-register for EDN and etcd logs; for native histories
// owner-mutex (lock operations; the caller checks read/write with kRegister separately).
Model DefaultModel(HistoryFormat f);
// cas_fail_is_observation for kPorcupineEtcd, defaults otherwise.
LinearizabilityOptions FormatOptions(HistoryFormat f, LinearizabilityOptions base = {});

}  // namespace locklab::checker
