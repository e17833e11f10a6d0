/* hiredis_lock: a locklab lock driver in C over hiredis (Debian libhiredis-dev 0.14): the
 * canonical single-instance Redis lock. acquire is SET key token NX PX ttl with a random
 * token, retried until the answer is due; release is a Lua compare-and-delete; renew a Lua
 * compare-and-PEXPIRE. The protocol loop is locklab_driver.c.
 *
 * Outcomes: a refused connection (nothing was sent) is a certain failure, retried by acquire
 * until its deadline; a reply that does not come within LOCKLAB_COMMAND_TIMEOUT_MS, or a
 * connection lost after sending, is unknown (the command may have run), and the connection is
 * dropped so the next request starts on a fresh one.
 *
 *   ./locklab driver-check --lock driver:examples/drivers/c/hiredis_lock
 *   ./locklab run --lock driver:examples/drivers/c/hiredis_lock --fault client-pause */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "locklab_driver.h"

static const char *kRelease =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
static const char *kRenew =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

static redisContext *conn = NULL;

static struct timeval ms_tv(int64_t ms) {
  struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000)};
  return tv;
}

/* A connection to the first node: NULL with *refused set when it could not be made (nothing
 * was sent), with *why saying what happened. */
static redisContext *connection(int *refused, char *why, size_t n) {
  *refused = 0;
  if (conn != NULL) return conn;
  if (LD_NNODES == 0) {
    snprintf(why, n, "LOCKLAB_NODES is empty");
    *refused = 1;
    return NULL;
  }
  redisContext *c = redisConnectWithTimeout(LD_NODES[0].host, LD_NODES[0].port, ms_tv(LD_CONNECT_TIMEOUT_MS));
  if (c == NULL || c->err) {
    snprintf(why, n, "connect %s:%d: %s", LD_NODES[0].host, LD_NODES[0].port, c ? c->errstr : "out of memory");
    if (c) redisFree(c);
    *refused = 1;  /* no command went out on it */
    return NULL;
  }
  redisSetTimeout(c, ms_tv(LD_COMMAND_TIMEOUT_MS));
  conn = c;
  return conn;
}

/* One command. Returns the reply, or NULL with the answer set: fail when nothing was sent
 * (refused), unknown when it was (a timeout, a lost connection). */
static redisReply *command(ld_answer *a, int argc, const char **argv) {
  char why[300];
  int refused;
  redisContext *c = connection(&refused, why, sizeof(why));
  if (c == NULL) {
    char detail[400];
    snprintf(detail, sizeof(detail), "connection refused: %s", why);
    ld_fail(a, detail);
    return NULL;
  }
  redisReply *reply = redisCommandArgv(c, argc, argv, NULL);
  if (reply == NULL) {
    char detail[400];
    snprintf(detail, sizeof(detail), "%s", c->errstr[0] ? c->errstr : "no reply");
    if (c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == ETIMEDOUT)) {
      snprintf(detail, sizeof(detail), "no reply within %lld ms", (long long)LD_COMMAND_TIMEOUT_MS);
    }
    redisFree(conn);
    conn = NULL;  /* out of step with its replies: a fresh one next time */
    ld_unknown(a, detail);
    return NULL;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    char detail[400];
    snprintf(detail, sizeof(detail), "redis: %s", reply->str);
    freeReplyObject(reply);
    ld_unknown(a, detail);  /* e.g. a script error: whether it ran is not ours to say */
    return NULL;
  }
  return reply;
}

static void random_token(char *out, size_t n) {
  unsigned char bytes[16];
  int fd = open("/dev/urandom", O_RDONLY);
  if (fd < 0 || read(fd, bytes, sizeof(bytes)) != (ssize_t)sizeof(bytes)) {
    for (size_t i = 0; i < sizeof(bytes); ++i) bytes[i] = (unsigned char)(ld_now_ms() >> (i % 8)) ^ (unsigned char)getpid();
  }
  if (fd >= 0) close(fd);
  for (size_t i = 0; i < sizeof(bytes) && 2 * i + 2 < n; ++i) snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

static int acquire(const ld_request *r, ld_answer *a) {
  char token[40] = {0}, ttl[32];
  random_token(token, sizeof(token));
  snprintf(ttl, sizeof(ttl), "%lld", (long long)r->ttl_ms);
  const char *argv[] = {"SET", r->key, token, "NX", "PX", ttl};
  const int64_t give_up = ld_give_up_at(r);
  for (;;) {
    ld_answer attempt;
    memset(&attempt, 0, sizeof(attempt));
    redisReply *reply = command(&attempt, 6, argv);
    if (reply == NULL && strcmp(attempt.outcome, "unknown") == 0) {
      *a = attempt;  /* the SET may have been applied: only the caller may say what follows */
      a->fence = a->validity_ms = -1;
      return 0;
    }
    if (reply != NULL && reply->type == REDIS_REPLY_STATUS && strcmp(reply->str, "OK") == 0) {
      freeReplyObject(reply);
      ld_ok(a);
      ld_token(a, token);
      a->validity_ms = r->ttl_ms;
      return 0;
    }
    if (reply != NULL) freeReplyObject(reply);  /* nil: held by someone else */
    if (ld_now_ms() + LD_RETRY_DELAY_MS > give_up) {
      ld_fail(a, reply == NULL ? attempt.detail : "key held until the deadline");
      return 0;
    }
    ld_sleep_ms(LD_RETRY_DELAY_MS);
  }
}

/* A script that answers 1 (done) or 0 (not owned). */
static int owned_script(const ld_request *r, ld_answer *a, const char *script, const char *arg) {
  const char *argv[] = {"EVAL", script, "1", r->key, r->token, arg};
  redisReply *reply = command(a, arg ? 6 : 5, argv);
  if (reply == NULL) return 0;
  if (reply->type == REDIS_REPLY_INTEGER && reply->integer == 1) {
    ld_ok(a);
  } else {
    ld_fail(a, "not owned");
  }
  freeReplyObject(reply);
  return 0;
}

static int release(const ld_request *r, ld_answer *a) { return owned_script(r, a, kRelease, NULL); }

static int renew(const ld_request *r, ld_answer *a) {
  char ttl[32];
  snprintf(ttl, sizeof(ttl), "%lld", (long long)r->ttl_ms);
  owned_script(r, a, kRenew, ttl);
  if (strcmp(a->outcome, "ok") == 0) a->validity_ms = r->ttl_ms;
  return 0;
}

int main(void) {
  ld_lock lock = {.name = "hiredis SET NX PX (C)", .acquire = acquire, .release = release, .renew = renew};
  int rc = ld_run(&lock);
  if (conn != NULL) redisFree(conn);
  return rc;
}
