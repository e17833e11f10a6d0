/* locklab_driver.h: the protocol loop of a locklab lock driver in C (docs/driver-protocol.md),
 * so that a C driver is only its acquire, release and renew. No JSON library: the protocol's
 * requests are flat objects, and this reads their string and integer fields (nested values
 * of fields it does not know are skipped).
 *
 *   static int acquire(const ld_request *r, ld_answer *a) {
 *     ... ld_ok(a); ld_token(a, token); ...  or ld_fail(a, "held") / ld_unknown(a, "timeout")
 *   }
 *   int main(void) {
 *     ld_lock lock = {.name = "my lock 1.0", .acquire = acquire, .release = release, .renew = renew};
 *     return ld_run(&lock);
 *   }
 *
 * ld_run prints the hello ("renew" true when .renew is set), reads requests line by line,
 * calls the callback of each request's op and prints its answer with the request's id, one
 * line each, flushed; an unknown op is `fail`, an unreadable line is logged and skipped, EOF
 * ends the loop (ld_run returns 0). A callback that sets nothing answers `unknown` (the
 * honest default: the operation may have run). Log with ld_log() (stderr, the client's log).
 *
 * Times: r->deadline_ms is the monotonic time (ld_now_ms()) the answer is due;
 * ld_give_up_at(r) is when to stop retrying so that the answer is in time (one command
 * timeout and 20 ms before it). ld_sleep_ms() sleeps with poll(), which libfaketime (the
 * lab's clock faults) leaves alone.
 *
 * Single-threaded: one request at a time, as the protocol sends them. */
#ifndef LOCKLAB_DRIVER_H
#define LOCKLAB_DRIVER_H

#include <stdint.h>

#define LD_MAX_FIELDS 24
#define LD_MAX_NODES 9

typedef struct {
  char name[64];
  int is_string; /* 1: `str` holds the decoded string; 0: an integer in `num` (has_num) */
  int has_num;
  char *str;
  int64_t num;
} ld_field;

typedef struct {
  int64_t id;
  const char *op;    /* "" when absent */
  const char *key;   /* "" when absent */
  const char *token; /* "" when absent */
  int64_t ttl_ms, timeout_ms;
  int64_t fence; /* -1 when absent */
  int64_t started_ms, deadline_ms;
  int nfields;
  ld_field fields[LD_MAX_FIELDS];
} ld_request;

typedef struct {
  char outcome[8]; /* "ok", "fail", "unknown"; "" = unknown */
  char token[256];
  int64_t fence;       /* -1: none */
  int64_t validity_ms; /* -1: none */
  int64_t value;       /* resource drivers: read / work */
  int has_value, value_null;
  int stale; /* work refused as older than the resource's newest fence: "stale": true */
  int64_t newest; /* with stale: the resource's newest fence ("newest"); -1: not said */
  char detail[512];
} ld_answer;

typedef int (*ld_callback)(const ld_request *r, ld_answer *a);

typedef struct {
  const char *name;
  ld_callback acquire, release, renew; /* renew may be NULL */
  ld_callback read, work;              /* both set: the hello says "resource": true */
  const char *backend;                 /* NULL: redis */
  int nodes;                           /* 0: the run's */
} ld_lock;

/* The lab's environment. */
typedef struct {
  char host[256];
  int port;
} ld_node;
extern ld_node LD_NODES[LD_MAX_NODES];
extern int LD_NNODES;
extern int64_t LD_TTL_MS, LD_RETRY_DELAY_MS, LD_CONNECT_TIMEOUT_MS, LD_COMMAND_TIMEOUT_MS;

int ld_run(const ld_lock *lock);
/* Reads the lab's environment (LD_NODES, ...); ld_run calls it, a driver that connects
 * before its hello calls it first. */
void ld_init(void);
int64_t ld_now_ms(void);
int64_t ld_give_up_at(const ld_request *r);
void ld_sleep_ms(int64_t ms);
void ld_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A field of the request: NULL when absent. */
const ld_field *ld_get(const ld_request *r, const char *name);

void ld_ok(ld_answer *a);
void ld_fail(ld_answer *a, const char *detail);
void ld_unknown(ld_answer *a, const char *detail);
void ld_token(ld_answer *a, const char *token);

#endif
