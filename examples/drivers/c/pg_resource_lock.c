/* pg_resource_lock: a locklab lock driver whose guarded resource is the team's own, a
 * PostgreSQL row with a version column (docs/driver-protocol.md, "Your own resource").
 *
 * The hello asks the lab for a PostgreSQL server ("backend": "postgres") and says
 * "resource": true. The driver finds the server in LOCKLAB_NODES (host:port, through the
 * lab's fault proxy; user locklab, database postgres, no password: the lab's server trusts
 * loopback). On it:
 *
 *   lock      a lease row per key in locklab_locks (token, fence, expires_at on the server's
 *             clock): acquire inserts it, or takes over an expired one, with a fence from the
 *             sequence locklab_fence (so every grant's fence is above every earlier one);
 *             release deletes it if the token still owns it; renew moves expires_at if it does
 *             and it has not expired.
 *   resource  a row per counter in locklab_counters (name, value, version). `read` returns
 *             value; `work` writes the value the client computed under its lease. Fenced (the
 *             default), the write is accepted only if the request's fence is not older than
 *             the row's version, which it then becomes: Kleppmann's fencing on the team's
 *             resource. A refused write answers fail with "stale": true and the row's version
 *             as "newest".
 *
 * --unfenced: the write ignores the version (the row takes whatever comes last): a holder
 * stopped past its lease writes over the next holder's update, and the lab sees it in this
 * driver's answers (lost updates, writes accepted with an older fence).
 *
 * Every statement runs on libpq's asynchronous API with a poll() bounded by the command
 * timeout (a stopped server must not hang an answer): no reply in time, or a connection lost
 * after sending, is unknown and drops the connection; a refused connect is fail. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "locklab_driver.h"

static PGconn *conn = NULL;
static int unfenced = 0;

static const char *kSchema =
    "SELECT pg_advisory_xact_lock(74217);"
    "CREATE TABLE IF NOT EXISTS locklab_locks (key text PRIMARY KEY, token text NOT NULL,"
    " fence bigint NOT NULL, expires_at timestamptz NOT NULL);"
    "CREATE SEQUENCE IF NOT EXISTS locklab_fence;"
    "CREATE TABLE IF NOT EXISTS locklab_counters (name text PRIMARY KEY, value bigint NOT NULL,"
    " version bigint NOT NULL)";

/* Waits until the connection's socket is ready for `events` or `until` (ld_now_ms) passes. */
static int wait_socket(short events, int64_t until) {
  int64_t left = until - ld_now_ms();
  if (left <= 0) return 0;
  struct pollfd p = {PQsocket(conn), events, 0};
  return poll(&p, 1, (int)left) > 0;
}

static void drop(void) {
  if (conn != NULL) PQfinish(conn);
  conn = NULL;
}

/* A connection: 0, or -1 with the answer set to fail (nothing was sent). */
static int connect_db(ld_answer *a) {
  if (conn != NULL) return 0;
  if (LD_NNODES == 0) {
    ld_fail(a, "LOCKLAB_NODES is empty");
    return -1;
  }
  char port[16];
  snprintf(port, sizeof(port), "%d", LD_NODES[0].port);
  const char *keys[] = {"host", "port", "user", "dbname", "sslmode", "gssencmode", NULL};
  const char *values[] = {LD_NODES[0].host, port, "locklab", "postgres", "disable", "disable", NULL};
  conn = PQconnectStartParams(keys, values, 0);
  int64_t until = ld_now_ms() + LD_CONNECT_TIMEOUT_MS + LD_COMMAND_TIMEOUT_MS;
  PostgresPollingStatusType st = PGRES_POLLING_WRITING;
  while (conn != NULL && PQstatus(conn) != CONNECTION_BAD) {
    if (st == PGRES_POLLING_OK) return 0;
    if (!wait_socket(st == PGRES_POLLING_READING ? POLLIN : POLLOUT, until)) break;
    st = PQconnectPoll(conn);
    if (st == PGRES_POLLING_FAILED) break;
  }
  char detail[400];
  snprintf(detail, sizeof(detail), "connect %s:%d: %s", LD_NODES[0].host, LD_NODES[0].port,
           conn ? PQerrorMessage(conn) : "out of memory");
  detail[strcspn(detail, "\n")] = '\0';
  drop();
  ld_fail(a, detail);  /* the session never started: no statement was sent */
  return -1;
}

/* Runs `sql` with its parameters; returns its last result (PQclear it), or NULL with the
 * answer set: fail when nothing was sent, unknown when it was. An SQL error answers unknown
 * too (the caller has no statement that may fail half-way). */
static PGresult *run(ld_answer *a, const char *sql, int n, const char *const *params) {
  if (connect_db(a) != 0) return NULL;
  int sent = n > 0 ? PQsendQueryParams(conn, sql, n, NULL, params, NULL, NULL, 0) : PQsendQuery(conn, sql);
  if (!sent) {
    char detail[400];
    snprintf(detail, sizeof(detail), "send: %s", PQerrorMessage(conn));
    drop();
    ld_unknown(a, detail);
    return NULL;
  }
  const int64_t until = ld_now_ms() + LD_COMMAND_TIMEOUT_MS;
  PGresult *last = NULL;
  for (;;) {
    while (PQisBusy(conn)) {
      if (!wait_socket(POLLIN, until) || !PQconsumeInput(conn)) {
        char detail[400];
        snprintf(detail, sizeof(detail), "no reply within %lld ms", (long long)LD_COMMAND_TIMEOUT_MS);
        if (last) PQclear(last);
        drop();  /* out of step: a fresh session next time */
        ld_unknown(a, detail);
        return NULL;
      }
    }
    PGresult *res = PQgetResult(conn);
    if (res == NULL) break;
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      char detail[400];
      snprintf(detail, sizeof(detail), "postgres: %s", PQresultErrorMessage(res));
      detail[strcspn(detail, "\n")] = '\0';
      PQclear(res);
      if (last) PQclear(last);
      while ((res = PQgetResult(conn)) != NULL) PQclear(res);
      if (PQstatus(conn) == CONNECTION_BAD) drop();
      ld_unknown(a, detail);
      return NULL;
    }
    if (last) PQclear(last);
    last = res;
  }
  if (last == NULL) ld_unknown(a, "no result");
  return last;
}

static void random_token(char *out, size_t n) {
  unsigned char bytes[16] = {0};
  int fd = open("/dev/urandom", O_RDONLY);
  if (fd >= 0) {
    if (read(fd, bytes, sizeof(bytes)) != (ssize_t)sizeof(bytes)) bytes[0] ^= (unsigned char)getpid();
    close(fd);
  }
  for (size_t i = 0; i < sizeof(bytes) && 2 * i + 2 < n; ++i) snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

static int acquire(const ld_request *r, ld_answer *a) {
  char token[40] = {0}, ttl[32];
  random_token(token, sizeof(token));
  snprintf(ttl, sizeof(ttl), "%lld", (long long)r->ttl_ms);
  const char *params[] = {r->key, token, ttl};
  const int64_t give_up = ld_give_up_at(r);
  for (;;) {
    ld_answer attempt;
    memset(&attempt, 0, sizeof(attempt));
    PGresult *res = run(&attempt,
                        "INSERT INTO locklab_locks VALUES ($1, $2, nextval('locklab_fence'),"
                        " clock_timestamp() + $3::bigint * interval '1 millisecond')"
                        " ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, fence = EXCLUDED.fence,"
                        " expires_at = EXCLUDED.expires_at WHERE locklab_locks.expires_at < clock_timestamp()"
                        " RETURNING fence",
                        3, params);
    if (res == NULL && strcmp(attempt.outcome, "unknown") == 0) {
      *a = attempt;  /* it may have been granted */
      a->fence = a->validity_ms = -1;
      return 0;
    }
    if (res != NULL && PQntuples(res) == 1) {
      ld_ok(a);
      ld_token(a, token);
      a->fence = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
      a->validity_ms = r->ttl_ms;
      PQclear(res);
      return 0;
    }
    if (res != NULL) PQclear(res);  /* no row: held and not expired */
    if (ld_now_ms() + LD_RETRY_DELAY_MS > give_up) {
      ld_fail(a, res == NULL ? attempt.detail : "key held until the deadline");
      return 0;
    }
    ld_sleep_ms(LD_RETRY_DELAY_MS);
  }
}

/* A statement that changes one row when the token owns it: ok, else fail "not owned". */
static int owned(ld_answer *a, const char *sql, int n, const char *const *params) {
  PGresult *res = run(a, sql, n, params);
  if (res == NULL) return 0;
  if (strcmp(PQcmdTuples(res), "1") == 0) ld_ok(a);
  else ld_fail(a, "not owned");
  PQclear(res);
  return 0;
}

static int release(const ld_request *r, ld_answer *a) {
  const char *params[] = {r->key, r->token};
  return owned(a, "DELETE FROM locklab_locks WHERE key = $1 AND token = $2", 2, params);
}

static int renew(const ld_request *r, ld_answer *a) {
  char ttl[32];
  snprintf(ttl, sizeof(ttl), "%lld", (long long)r->ttl_ms);
  const char *params[] = {r->key, r->token, ttl};
  owned(a,
        "UPDATE locklab_locks SET expires_at = clock_timestamp() + $3::bigint * interval '1 millisecond'"
        " WHERE key = $1 AND token = $2 AND expires_at >= clock_timestamp()",
        3, params);
  if (strcmp(a->outcome, "ok") == 0) a->validity_ms = r->ttl_ms;
  return 0;
}

static int read_counter(const ld_request *r, ld_answer *a) {
  const char *params[] = {r->key};
  PGresult *res = run(a, "SELECT value FROM locklab_counters WHERE name = $1", 1, params);
  if (res == NULL) return 0;
  ld_ok(a);
  a->has_value = 1;
  a->value_null = PQntuples(res) == 0;
  if (!a->value_null) a->value = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
  PQclear(res);
  return 0;
}

/* The critical section's write: the request's value, under its fence. */
static int work(const ld_request *r, ld_answer *a) {
  const ld_field *v = ld_get(r, "value");
  if (v == NULL || !v->has_num) {
    ld_fail(a, "work without an integer 'value'");
    return 0;
  }
  char value[32], fence[32];
  snprintf(value, sizeof(value), "%lld", (long long)v->num);
  snprintf(fence, sizeof(fence), "%lld", (long long)(r->fence >= 0 ? r->fence : 0));
  const char *params[] = {r->key, value, fence};
  PGresult *res = run(a,
                      unfenced ? "INSERT INTO locklab_counters VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE"
                                 " SET value = EXCLUDED.value, version = EXCLUDED.version RETURNING value, version"
                               : "INSERT INTO locklab_counters VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE"
                                 " SET value = EXCLUDED.value, version = EXCLUDED.version"
                                 " WHERE locklab_counters.version <= EXCLUDED.version RETURNING value, version",
                      3, params);
  if (res == NULL) return 0;
  if (PQntuples(res) == 1) {
    ld_ok(a);
    a->has_value = 1;
    a->value = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    if (r->fence >= 0) a->fence = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    PQclear(res);
    return 0;
  }
  PQclear(res);
  /* Refused: the row holds a newer version. The write did not happen. */
  ld_fail(a, "stale fence: the row's version is newer");
  ld_answer probe;
  memset(&probe, 0, sizeof(probe));
  PGresult *newest = run(&probe, "SELECT version FROM locklab_counters WHERE name = $1", 1, params);
  if (newest != NULL) {
    if (PQntuples(newest) == 1) {
      snprintf(a->detail, sizeof(a->detail), "stale fence %s: the row's version is %s", fence,
               PQgetvalue(newest, 0, 0));
      a->newest = strtoll(PQgetvalue(newest, 0, 0), NULL, 10);
    }
    PQclear(newest);
  }
  a->stale = 1;
  return 0;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--unfenced") == 0) {
      unfenced = 1;
    } else {
      fprintf(stderr, "pg_resource_lock: unknown argument '%s' (takes --unfenced)\n", argv[i]);
      return 64;
    }
  }
  ld_init();
  if (getenv("LOCKLAB_PROBE") == NULL) {
    /* Before the hello (not when started only to read it): connect and make the tables. */
    ld_answer a;
    memset(&a, 0, sizeof(a));
    for (int attempt = 0; attempt < 20; ++attempt) {
      memset(&a, 0, sizeof(a));
      PGresult *res = NULL;
      if (connect_db(&a) == 0) {
        LD_COMMAND_TIMEOUT_MS += 5000;  /* DDL on a busy machine */
        res = run(&a, kSchema, 0, NULL);
        LD_COMMAND_TIMEOUT_MS -= 5000;
      }
      if (res != NULL) {
        PQclear(res);
        break;
      }
      ld_log("schema: %s (retrying)", a.detail);
      ld_sleep_ms(200);
    }
  }
  ld_lock lock = {.name = unfenced ? "pg lease row, unfenced resource (C)" : "pg lease row, fenced resource (C)",
                  .acquire = acquire,
                  .release = release,
                  .renew = renew,
                  .read = read_counter,
                  .work = work,
                  .backend = "postgres",
                  .nodes = 1};
  int rc = ld_run(&lock);
  drop();
  return rc;
}
