/* locklab_driver.c: see locklab_driver.h. */
#define _GNU_SOURCE
#include "locklab_driver.h"

#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>

ld_node LD_NODES[LD_MAX_NODES];
int LD_NNODES = 0;
int64_t LD_TTL_MS = 1000, LD_RETRY_DELAY_MS = 20, LD_CONNECT_TIMEOUT_MS = 200, LD_COMMAND_TIMEOUT_MS = 200;


static int64_t env_int(const char *name, int64_t dflt) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0') return dflt;
  char *end;
  long long n = strtoll(v, &end, 10);
  return *end == '\0' ? (int64_t)n : dflt;
}

void ld_init(void) {
  static int done = 0;
  if (done) return;
  done = 1;
  LD_TTL_MS = env_int("LOCKLAB_TTL_MS", 1000);
  LD_RETRY_DELAY_MS = env_int("LOCKLAB_RETRY_DELAY_MS", 20);
  LD_CONNECT_TIMEOUT_MS = env_int("LOCKLAB_CONNECT_TIMEOUT_MS", 200);
  LD_COMMAND_TIMEOUT_MS = env_int("LOCKLAB_COMMAND_TIMEOUT_MS", 200);
  const char *nodes = getenv("LOCKLAB_NODES");
  if (nodes == NULL) return;
  char *copy = strdup(nodes), *save = NULL;
  for (char *hp = strtok_r(copy, ",", &save); hp != NULL && LD_NNODES < LD_MAX_NODES;
       hp = strtok_r(NULL, ",", &save)) {
    char *colon = strrchr(hp, ':');
    if (colon == NULL) continue;
    *colon = '\0';
    snprintf(LD_NODES[LD_NNODES].host, sizeof(LD_NODES[0].host), "%s", hp);
    LD_NODES[LD_NNODES].port = atoi(colon + 1);
    ++LD_NNODES;
  }
  free(copy);
}

int64_t ld_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t ld_give_up_at(const ld_request *r) {
  int64_t t = r->deadline_ms - LD_COMMAND_TIMEOUT_MS - 20;
  return t > r->started_ms ? t : r->started_ms;
}

void ld_sleep_ms(int64_t ms) {
  if (ms > 0) poll(NULL, 0, (int)ms);
}

void ld_log(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *name = program_invocation_short_name;
  fprintf(stderr, "%s[%s]: ", name, getenv("LOCKLAB_PROCESS") ? getenv("LOCKLAB_PROCESS") : "?");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

const ld_field *ld_get(const ld_request *r, const char *name) {
  for (int i = 0; i < r->nfields; ++i) {
    if (strcmp(r->fields[i].name, name) == 0) return &r->fields[i];
  }
  return NULL;
}

void ld_ok(ld_answer *a) { snprintf(a->outcome, sizeof(a->outcome), "ok"); }
void ld_fail(ld_answer *a, const char *detail) {
  snprintf(a->outcome, sizeof(a->outcome), "fail");
  snprintf(a->detail, sizeof(a->detail), "%s", detail ? detail : "");
}
void ld_unknown(ld_answer *a, const char *detail) {
  snprintf(a->outcome, sizeof(a->outcome), "unknown");
  snprintf(a->detail, sizeof(a->detail), "%s", detail ? detail : "");
}
void ld_token(ld_answer *a, const char *token) { snprintf(a->token, sizeof(a->token), "%s", token); }

/* ---- reading a request: a flat JSON object ---------------------------------------------- */

static const char *skip_ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') ++p;
  return p;
}

static void put_utf8(char **o, unsigned cp) {
  if (cp < 0x80) {
    *(*o)++ = (char)cp;
  } else if (cp < 0x800) {
    *(*o)++ = (char)(0xC0 | (cp >> 6));
    *(*o)++ = (char)(0x80 | (cp & 0x3F));
  } else {
    *(*o)++ = (char)(0xE0 | (cp >> 12));
    *(*o)++ = (char)(0x80 | ((cp >> 6) & 0x3F));
    *(*o)++ = (char)(0x80 | (cp & 0x3F));
  }
}

/* A JSON string at p (after its opening quote), decoded in place into *out (which may alias
 * p: decoding never grows). Returns the position after the closing quote, NULL if malformed. */
static char *parse_string(char *p, char **out) {
  char *o = p;
  *out = p;
  while (*p != '"') {
    if (*p == '\0') return NULL;
    if (*p != '\\') {
      *o++ = *p++;
      continue;
    }
    ++p;
    switch (*p) {
      case 'n': *o++ = '\n'; break;
      case 't': *o++ = '\t'; break;
      case 'r': *o++ = '\r'; break;
      case 'b': *o++ = '\b'; break;
      case 'f': *o++ = '\f'; break;
      case 'u': {
        unsigned cp = 0;
        for (int i = 1; i <= 4; ++i) {
          char c = p[i];
          cp <<= 4;
          if (c >= '0' && c <= '9') cp |= (unsigned)(c - '0');
          else if (c >= 'a' && c <= 'f') cp |= (unsigned)(c - 'a' + 10);
          else if (c >= 'A' && c <= 'F') cp |= (unsigned)(c - 'A' + 10);
          else return NULL;
        }
        p += 4;
        put_utf8(&o, cp);  /* (a surrogate pair stays two code points: no key needs one) */
        break;
      }
      case '\0': return NULL;
      default: *o++ = *p; break;
    }
    ++p;
  }
  *o = '\0';
  return p + 1;
}

/* Skips one JSON value of any kind; NULL if malformed. */
static char *skip_value(char *p) {
  p = (char *)skip_ws(p);
  if (*p == '"') {
    char *s;
    return parse_string(p + 1, &s);
  }
  if (*p == '{' || *p == '[') {
    int depth = 0;
    do {
      if (*p == '"') {
        char *s;
        p = parse_string(p + 1, &s);
        if (p == NULL) return NULL;
        continue;
      }
      if (*p == '{' || *p == '[') ++depth;
      else if (*p == '}' || *p == ']') --depth;
      else if (*p == '\0') return NULL;
      ++p;
    } while (depth > 0);
    return p;
  }
  while (*p != '\0' && *p != ',' && *p != '}' && *p != ']' && *p != ' ') ++p;
  return p;
}

/* Parses `line` (modified in place) into *r. Returns 0, or -1 for a line that is not a JSON
 * object with an integer id. */
static int parse_request(char *line, ld_request *r) {
  memset(r, 0, sizeof(*r));
  r->op = r->key = r->token = "";
  r->fence = -1;
  r->ttl_ms = LD_TTL_MS;
  int has_id = 0;
  char *p = (char *)skip_ws(line);
  if (*p++ != '{') return -1;
  p = (char *)skip_ws(p);
  if (*p == '}') return -1;
  for (;;) {
    p = (char *)skip_ws(p);
    if (*p++ != '"') return -1;
    char *name;
    p = parse_string(p, &name);
    if (p == NULL) return -1;
    p = (char *)skip_ws(p);
    if (*p++ != ':') return -1;
    p = (char *)skip_ws(p);
    ld_field f;
    memset(&f, 0, sizeof(f));
    snprintf(f.name, sizeof(f.name), "%s", name);
    int keep = 1;
    if (*p == '"') {
      f.is_string = 1;
      p = parse_string(p + 1, &f.str);
      if (p == NULL) return -1;
    } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
      char *end;
      f.num = strtoll(p, &end, 10);
      f.has_num = (*end != '.' && *end != 'e' && *end != 'E');
      p = skip_value(p);
    } else {
      keep = 0;  /* true/false/null, objects, arrays: not a field the protocol sends us */
      p = skip_value(p);
    }
    if (p == NULL) return -1;
    if (keep && r->nfields < LD_MAX_FIELDS) r->fields[r->nfields++] = f;
    p = (char *)skip_ws(p);
    if (*p == ',') {
      ++p;
      continue;
    }
    if (*p == '}') break;
    return -1;
  }
  for (int i = 0; i < r->nfields; ++i) {
    ld_field *f = &r->fields[i];
    if (strcmp(f->name, "id") == 0 && f->has_num) {
      r->id = f->num;
      has_id = 1;
    } else if (f->is_string && strcmp(f->name, "op") == 0) {
      r->op = f->str;
    } else if (f->is_string && strcmp(f->name, "key") == 0) {
      r->key = f->str;
    } else if (f->is_string && strcmp(f->name, "token") == 0) {
      r->token = f->str;
    } else if (f->has_num && strcmp(f->name, "ttl_ms") == 0) {
      r->ttl_ms = f->num;
    } else if (f->has_num && strcmp(f->name, "timeout_ms") == 0) {
      r->timeout_ms = f->num;
    } else if (f->has_num && strcmp(f->name, "fence") == 0) {
      r->fence = f->num;
    }
  }
  return has_id ? 0 : -1;
}

/* ---- writing an answer -------------------------------------------------------------------- */

static void put_json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
    if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
    else if (*p < 0x20) fprintf(out, "\\u%04x", *p);
    else fputc(*p, out);
  }
  fputc('"', out);
}

static void send_answer(int64_t id, const ld_answer *a) {
  const char *outcome = a->outcome[0] ? a->outcome : "unknown";
  printf("{\"id\":%lld,\"outcome\":\"%s\"", (long long)id, outcome);
  if (strcmp(outcome, "ok") == 0) {
    if (a->token[0]) {
      fputs(",\"token\":", stdout);
      put_json_string(stdout, a->token);
    }
    if (a->fence >= 0) printf(",\"fence\":%lld", (long long)a->fence);
    if (a->validity_ms >= 0) printf(",\"validity_ms\":%lld", (long long)a->validity_ms);
    if (a->has_value) {
      if (a->value_null) fputs(",\"value\":null", stdout);
      else printf(",\"value\":%lld", (long long)a->value);
    }
  }
  if (strcmp(outcome, "fail") == 0 && a->stale) {
    fputs(",\"stale\":true", stdout);
    if (a->newest >= 0) printf(",\"newest\":%lld", (long long)a->newest);
  }
  if (a->detail[0]) {
    fputs(",\"detail\":", stdout);
    put_json_string(stdout, a->detail);
  } else if (!a->outcome[0]) {
    fputs(",\"detail\":\"the driver set no outcome\"", stdout);
  }
  fputs("}\n", stdout);
  fflush(stdout);
}

int ld_run(const ld_lock *lock) {
  ld_init();
  printf("{\"hello\":\"locklab-driver\",\"protocol\":1,\"renew\":%s,\"name\":", lock->renew ? "true" : "false");
  put_json_string(stdout, lock->name);
  if (lock->read && lock->work) fputs(",\"resource\":true", stdout);
  if (lock->backend) {
    fputs(",\"backend\":", stdout);
    put_json_string(stdout, lock->backend);
  }
  if (lock->nodes > 0) printf(",\"nodes\":%d", lock->nodes);
  fputs("}\n", stdout);
  fflush(stdout);
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, stdin)) >= 0) {
    if (strspn(line, " \t\r\n") == (size_t)n) continue;
    int64_t started = ld_now_ms();
    ld_request r;
    char excerpt[101];
    snprintf(excerpt, sizeof(excerpt), "%s", line);
    excerpt[strcspn(excerpt, "\r\n")] = '\0';
    if (parse_request(line, &r) != 0) {
      ld_log("bad request '%s': not a JSON object with an integer id; skipped", excerpt);
      continue;
    }
    r.started_ms = started;
    r.deadline_ms = started + r.timeout_ms;
    ld_answer a;
    memset(&a, 0, sizeof(a));
    a.fence = a.validity_ms = a.newest = -1;
    ld_callback cb = NULL;
    if (strcmp(r.op, "acquire") == 0) cb = lock->acquire;
    else if (strcmp(r.op, "release") == 0) cb = lock->release;
    else if (strcmp(r.op, "renew") == 0) cb = lock->renew;
    else if (strcmp(r.op, "read") == 0) cb = lock->read;
    else if (strcmp(r.op, "work") == 0) cb = lock->work;
    if (cb == NULL) {
      char why[160];
      snprintf(why, sizeof(why), "unknown op '%.100s'", r.op);
      ld_fail(&a, why);
    } else {
      cb(&r, &a);
    }
    send_answer(r.id, &a);
  }
  free(line);
  ld_log("stdin closed: exiting");
  return 0;
}
