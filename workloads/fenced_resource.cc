#include "workloads/fenced_resource.h"

namespace locklab::workloads {
namespace {

// KEYS[1] counter, KEYS[2] its newest accepted token; ARGV[1] value, ARGV[2] token.
// Returns {1, previous newest} when written, {0, newest} when rejected.
const char kCheckAndWriteScript[] =
    "local newest = tonumber(redis.call('get', KEYS[2]) or '-1') "
    "local token = tonumber(ARGV[2]) "
    "if token < newest then return {0, newest} end "
    "redis.call('set', KEYS[2], ARGV[2]) "
    "redis.call('set', KEYS[1], ARGV[1]) "
    "return {1, newest}";

}  // namespace

std::string FenceOf(const std::string& counter) { return counter + ":fence"; }

FencedWriteResult FencedWrite(locks::RedisConnection& resource, const std::string& counter,
                              long long value, long long fence) {
  FencedWriteResult out;
  locks::Reply r = resource.Command({"EVAL", kCheckAndWriteScript, "2", counter, FenceOf(counter),
                                     std::to_string(value), std::to_string(fence)});
  out.outcome = r.outcome;
  if (r.outcome != locks::Outcome::kOk) {
    out.error = r.transport_error;
    return out;
  }
  if (r.is_error || r.elements.size() != 2 || !r.elements[0].is_integer) {
    out.outcome = locks::Outcome::kFail;
    out.error = r.is_error ? r.str : "unexpected reply";
    return out;
  }
  out.accepted = r.elements[0].integer == 1;
  out.newest = r.elements[1].integer;
  return out;
}

}  // namespace locklab::workloads
