package locklab;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The protocol loop of a locklab lock driver in Java (docs/driver-protocol.md), so that a Java
 * driver is only its {@link LockUnderTest}. No third-party library: the protocol's lines are
 * flat JSON objects, read and written here by hand.
 *
 * <pre>
 *   import locklab.LocklabDriver;  // build/java-drivers/locklab-driver.jar (./locklab setup)
 *   public static void main(String[] args) { LocklabDriver.run(new MyLock()); }
 * </pre>
 *
 * run() prints the hello (renew, backend, nodes and name from the lock), reads requests line
 * by line, calls the lock's method for each op and prints its answer with the request's id,
 * flushed. An unknown op is `fail`; a line that is not a JSON object with an integer id is
 * logged and skipped; on EOF it calls close() and returns. Exceptions: Fail / Unknown are
 * those answers, anything else `unknown` ("Type: message", stack trace on stderr).
 *
 * Also here: the lab's environment (NODES, TTL_MS, RETRY_DELAY_MS, CONNECT_TIMEOUT_MS,
 * COMMAND_TIMEOUT_MS, PROCESS) and log() to stderr, which is the client's log. Single-threaded:
 * the lock is called from the thread that called run().
 */
public final class LocklabDriver {
  private LocklabDriver() {}

  public static final int PROTOCOL = 1;
  /** LOCKLAB_NODES: the lock servers, "host:port", through the lab's fault proxy. */
  public static final List<String> NODES = nodes(System.getenv("LOCKLAB_NODES"));
  public static final long TTL_MS = envLong("LOCKLAB_TTL_MS", 1000);
  public static final long RETRY_DELAY_MS = envLong("LOCKLAB_RETRY_DELAY_MS", 20);
  public static final long CONNECT_TIMEOUT_MS = envLong("LOCKLAB_CONNECT_TIMEOUT_MS", 200);
  public static final long COMMAND_TIMEOUT_MS = envLong("LOCKLAB_COMMAND_TIMEOUT_MS", 200);
  public static final String PROCESS =
      System.getenv("LOCKLAB_PROCESS") == null ? "?" : System.getenv("LOCKLAB_PROCESS");

  /** Throw from a lock method: the operation certainly did not happen. */
  public static final class Fail extends Exception {
    private static final long serialVersionUID = 1L;

    public Fail(String detail) {
      super(detail);
    }
  }

  /** Throw from a lock method: the operation may have happened. */
  public static final class Unknown extends Exception {
    private static final long serialVersionUID = 1L;

    public Unknown(String detail) {
      super(detail);
    }
  }

  /** A request as read, and its times (System.nanoTime, monotonic). */
  public static final class Request {
    public final Map<String, Object> fields;
    public final long id;
    public final String op, key, token;
    public final long ttlMs, timeoutMs;
    public final Long fence;  // release / renew: the acquire's fence, if any
    public final long startedNanos, deadlineNanos;

    Request(Map<String, Object> f, long startedNanos) {
      fields = f;
      id = (Long) f.get("id");
      op = str(f.get("op"));
      key = str(f.get("key"));
      token = str(f.get("token"));
      ttlMs = f.get("ttl_ms") instanceof Long ? (Long) f.get("ttl_ms") : TTL_MS;
      timeoutMs = f.get("timeout_ms") instanceof Long ? (Long) f.get("timeout_ms") : 0;
      fence = f.get("fence") instanceof Long ? (Long) f.get("fence") : null;
      this.startedNanos = startedNanos;
      deadlineNanos = startedNanos + timeoutMs * 1_000_000L;
    }

    /** Milliseconds until the deadline (0 once past it). */
    public long leftMs() {
      return Math.max(0, (deadlineNanos - System.nanoTime()) / 1_000_000L);
    }

    /** When to stop retrying so that the answer is in time: one command timeout + 20 ms early. */
    public long giveUpAtNanos() {
      return Math.max(startedNanos, deadlineNanos - (COMMAND_TIMEOUT_MS + 20) * 1_000_000L);
    }

    private static String str(Object o) {
      return o instanceof String ? (String) o : null;
    }
  }

  /** An answer: outcome and the optional fields of the protocol. */
  public static final class Answer {
    final Map<String, Object> fields = new LinkedHashMap<>();

    private Answer(String outcome) {
      fields.put("outcome", outcome);
    }

    public static Answer ok() {
      return new Answer("ok");
    }

    /** acquire ok: the owner token (what was written to the server). */
    public static Answer ok(String token) {
      return ok().token(token);
    }

    public static Answer fail(String detail) {
      return new Answer("fail").detail(detail);
    }

    public static Answer unknown(String detail) {
      return new Answer("unknown").detail(detail);
    }

    public Answer token(String token) {
      fields.put("token", token);
      return this;
    }

    public Answer fence(long fence) {
      fields.put("fence", fence);
      return this;
    }

    public Answer validityMs(long ms) {
      fields.put("validity_ms", ms);
      return this;
    }

    /** read / work ok (a driver that owns the resource): the counter's value; null: never written. */
    public Answer value(Long value) {
      fields.put("value", value);
      return this;
    }

    /** work fail: the resource refused the write's fence as older than its newest. */
    public Answer stale(Long newest) {
      fields.put("stale", Boolean.TRUE);
      if (newest != null) fields.put("newest", newest);
      return this;
    }

    public Answer detail(String detail) {
      fields.put("detail", detail == null ? "" : detail);
      return this;
    }
  }

  private static final PrintStream OUT =
      new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
                      StandardCharsets.UTF_8);

  /** One line on stderr (the client's log). */
  public static void log(String msg) {
    System.err.println(logName + "[" + PROCESS + "]: " + msg);
    System.err.flush();
  }

  private static String logName = "java-driver";

  /** One protocol line on stdout, flushed. */
  static synchronized void send(Map<String, Object> obj) {
    OUT.print(Json.write(obj));
    OUT.print('\n');
    OUT.flush();
  }

  /** The main loop: hello, then one answer per request until EOF. */
  public static void run(LockUnderTest lock) {
    logName = lock.getClass().getSimpleName();
    if (!NODES.isEmpty() && System.getenv("LOCKLAB_PROBE") == null) {
      try {
        lock.start();
      } catch (Exception e) {
        log("start: " + e + " (the first request tries again)");
      }
    }
    Map<String, Object> hello = new LinkedHashMap<>();
    hello.put("hello", "locklab-driver");
    hello.put("protocol", (long) PROTOCOL);
    hello.put("renew", lock.renews());
    hello.put("name", lock.name());
    if (!"redis".equals(lock.backend())) hello.put("backend", lock.backend());
    if (lock.nodes() > 0) hello.put("nodes", (long) lock.nodes());
    if (lock.ownsResource()) hello.put("resource", Boolean.TRUE);
    send(hello);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try {
      String raw;
      while ((raw = in.readLine()) != null) {
        if (raw.isBlank()) continue;
        long started = System.nanoTime();
        Map<String, Object> f;
        try {
          Object parsed = Json.parse(raw);
          if (!(parsed instanceof Map)) throw new IllegalArgumentException("not a JSON object");
          @SuppressWarnings("unchecked")
          Map<String, Object> m = (Map<String, Object>) parsed;
          if (!(m.get("id") instanceof Long)) throw new IllegalArgumentException("no integer id");
          f = m;
        } catch (IllegalArgumentException e) {
          log("bad request " + raw.substring(0, Math.min(100, raw.length())) + ": " + e.getMessage());
          continue;
        }
        Request r = new Request(f, started);
        Answer a = answer(lock, r);
        a.fields.put("id", r.id);
        send(a.fields);
      }
    } catch (IOException e) {
      log("reading stdin: " + e);
    }
    log("stdin closed: exiting");
    lock.close();
  }

  private static Answer answer(LockUnderTest lock, Request r) {
    try {
      switch (r.op == null ? "" : r.op) {
        case "acquire":
          return lock.acquire(r);
        case "release":
          return lock.release(r);
        case "renew":
          if (lock.renews()) return lock.renew(r);
          return Answer.fail("unknown op 'renew' (this driver does not renew)");
        case "read":
          if (lock.ownsResource()) return lock.read(r);
          return Answer.fail("unknown op 'read' (this driver does not own the resource)");
        case "work":
          if (lock.ownsResource()) return lock.work(r);
          return Answer.fail("unknown op 'work' (this driver does not own the resource)");
        default:
          return Answer.fail("unknown op '" + r.op + "'");
      }
    } catch (Fail e) {
      return Answer.fail(e.getMessage());
    } catch (Unknown e) {
      return Answer.unknown(e.getMessage());
    } catch (Exception e) {
      StringWriter trace = new StringWriter();
      e.printStackTrace(new PrintWriter(trace));
      log(e.getClass().getSimpleName() + " on " + r.op + ": " + trace.toString().strip().replace("\n", " | "));
      return Answer.unknown(e.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  private static long envLong(String name, long dflt) {
    try {
      return Long.parseLong(System.getenv(name));
    } catch (NumberFormatException | NullPointerException e) {
      return dflt;
    }
  }

  private static List<String> nodes(String env) {
    List<String> out = new ArrayList<>();
    if (env != null) {
      for (String hp : env.split(",")) {
        if (hp.contains(":")) out.add(hp.trim());
      }
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * The JSON of the protocol's lines: objects, arrays, strings, integers (Long), other numbers
   * (Double), true, false, null. Enough for flat objects and the hello's "points" array; not a
   * general-purpose library (no streaming, objects keep their keys' order).
   */
  static final class Json {
    private final String s;
    private int i;

    private Json(String s) {
      this.s = s;
    }

    static Object parse(String text) {
      Json p = new Json(text);
      Object v = p.value();
      p.blanks();
      if (p.i != p.s.length()) throw p.error("trailing characters");
      return v;
    }

    private IllegalArgumentException error(String what) {
      return new IllegalArgumentException(what + " at offset " + i);
    }

    private void blanks() {
      while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
    }

    private boolean eat(char c) {
      blanks();
      if (i < s.length() && s.charAt(i) == c) {
        i++;
        return true;
      }
      return false;
    }

    private Object value() {
      blanks();
      if (i >= s.length()) throw error("unexpected end");
      char c = s.charAt(i);
      if (c == '{') {
        i++;
        Map<String, Object> m = new LinkedHashMap<>();
        if (eat('}')) return m;
        do {
          blanks();
          if (i >= s.length() || s.charAt(i) != '"') throw error("expected a key");
          String k = string();
          if (!eat(':')) throw error("expected ':'");
          m.put(k, value());
        } while (eat(','));
        if (!eat('}')) throw error("expected '}'");
        return m;
      }
      if (c == '[') {
        i++;
        List<Object> l = new ArrayList<>();
        if (eat(']')) return l;
        do {
          l.add(value());
        } while (eat(','));
        if (!eat(']')) throw error("expected ']'");
        return l;
      }
      if (c == '"') return string();
      if (s.startsWith("true", i)) {
        i += 4;
        return Boolean.TRUE;
      }
      if (s.startsWith("false", i)) {
        i += 5;
        return Boolean.FALSE;
      }
      if (s.startsWith("null", i)) {
        i += 4;
        return null;
      }
      int start = i;
      while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
      String num = s.substring(start, i);
      if (num.isEmpty()) throw error("unexpected character '" + c + "'");
      try {
        if (num.matches("-?\\d+")) return Long.parseLong(num);
        return Double.parseDouble(num);
      } catch (NumberFormatException e) {
        throw error("bad number '" + num + "'");
      }
    }

    private String string() {
      i++;  // the opening quote
      StringBuilder b = new StringBuilder();
      while (true) {
        if (i >= s.length()) throw error("unterminated string");
        char c = s.charAt(i++);
        if (c == '"') return b.toString();
        if (c != '\\') {
          b.append(c);
          continue;
        }
        if (i >= s.length()) throw error("unterminated escape");
        char e = s.charAt(i++);
        switch (e) {
          case '"': case '\\': case '/': b.append(e); break;
          case 'b': b.append('\b'); break;
          case 'f': b.append('\f'); break;
          case 'n': b.append('\n'); break;
          case 'r': b.append('\r'); break;
          case 't': b.append('\t'); break;
          case 'u':
            if (i + 4 > s.length()) throw error("short \\u escape");
            try {
              b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
            } catch (NumberFormatException x) {
              throw error("bad \\u escape");
            }
            i += 4;
            break;
          default: throw error("bad escape '\\" + e + "'");
        }
      }
    }

    static String write(Object v) {
      StringBuilder b = new StringBuilder();
      write(b, v);
      return b.toString();
    }

    private static void write(StringBuilder b, Object v) {
      if (v == null) {
        b.append("null");
      } else if (v instanceof String) {
        quote(b, (String) v);
      } else if (v instanceof Boolean || v instanceof Long || v instanceof Integer) {
        b.append(v);
      } else if (v instanceof Number) {
        double d = ((Number) v).doubleValue();
        b.append(Double.isFinite(d) ? Double.toString(d) : "null");
      } else if (v instanceof Map) {
        b.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
          if (!first) b.append(',');
          first = false;
          quote(b, String.valueOf(e.getKey()));
          b.append(':');
          write(b, e.getValue());
        }
        b.append('}');
      } else if (v instanceof List) {
        b.append('[');
        boolean first = true;
        for (Object o : (List<?>) v) {
          if (!first) b.append(',');
          first = false;
          write(b, o);
        }
        b.append(']');
      } else {
        quote(b, v.toString());
      }
    }

    private static void quote(StringBuilder b, String s) {
      b.append('"');
      for (int k = 0; k < s.length(); k++) {
        char c = s.charAt(k);
        if (c == '"' || c == '\\') {
          b.append('\\').append(c);
        } else if (c < 0x20) {
          b.append(String.format("\\u%04x", (int) c));
        } else {
          b.append(c);
        }
      }
      b.append('"');
    }
  }
}
