import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import locklab.LockUnderTest;
import locklab.LocklabDriver;

/**
 * A template for your own Java lock as a locklab lock driver: copy this file, replace the
 * small Redis client below with your Jedis / Redisson / Lettuce code, and run it with
 *
 *   ./locklab driver-check --lock driver:examples/drivers/java/template_driver
 *   ./locklab run --lock driver:examples/drivers/java/template_driver --fault client-pause
 *
 * (README.md in this folder: how to build it with your jars on the classpath). As shipped it
 * is a complete, correct single-instance lock with no library: SET NX PX with a random
 * token, a Lua compare-and-delete release and a Lua compare-and-PEXPIRE renew, over a
 * hand-written RESP client (Resp) on the first lab node. It passes `locklab driver-check`,
 * so a copy starts from a driver the lab accepts; the comments show the Jedis calls.
 *
 * Rules (docs/driver-protocol.md "Writing a driver: checklist"):
 *  - acquire retries until r.giveUpAtNanos() and answers ok with the owner token it wrote;
 *  - fail only when it certainly did not happen (refused, not owned, held); a timeout or a
 *    connection lost after sending is unknown: throw LocklabDriver.Unknown, or just let the
 *    exception out;
 *  - release (and renew) work from r.key and r.token alone, in a fresh process;
 *  - release stops any watchdog your library runs for that lock (Redisson's does).
 */
public final class TemplateDriver implements LockUnderTest {
  private static final String RELEASE =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
  private static final String RENEW =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) "
      + "else return 0 end";

  // With Jedis: private final JedisPool pool = new JedisPool(host, port); host and port from
  // LocklabDriver.NODES.get(0) ("host:port", through the fault proxy), timeouts from
  // LocklabDriver.CONNECT_TIMEOUT_MS / COMMAND_TIMEOUT_MS.
  private Resp redis;

  @Override
  public String name() {
    return "template (SET NX PX, Lua release)";  // your lock's name and version
  }

  @Override
  public boolean renews() {
    return true;
  }

  @Override
  public void start() throws Exception {
    conn().command("PING");  // connect before the hello
  }

  @Override
  public LocklabDriver.Answer acquire(LocklabDriver.Request r) throws Exception {
    // Jedis: jedis.set(r.key, token, SetParams.setParams().nx().px(r.ttlMs))
    String token = UUID.randomUUID().toString();
    String refused = null;
    while (true) {
      try {
        Object reply = conn().command("SET", r.key, token, "NX", "PX", Long.toString(r.ttlMs));
        if ("OK".equals(reply)) return LocklabDriver.Answer.ok(token).validityMs(r.ttlMs);
      } catch (ConnectException e) {
        refused = "connection refused: " + e.getMessage();  // nothing was sent: retry
        redis = null;
      } catch (IOException e) {
        redis = null;  // sent, no reply: the SET may have taken effect
        throw new LocklabDriver.Unknown(e.getClass().getSimpleName() + ": " + e.getMessage());
      }
      if (System.nanoTime() + LocklabDriver.RETRY_DELAY_MS * 1_000_000L > r.giveUpAtNanos()) {
        return LocklabDriver.Answer.fail(refused != null ? refused : "held until the deadline");
      }
      Thread.sleep(LocklabDriver.RETRY_DELAY_MS);
    }
  }

  @Override
  public LocklabDriver.Answer release(LocklabDriver.Request r) throws Exception {
    // Jedis: jedis.eval(RELEASE, List.of(r.key), List.of(r.token))
    Object deleted = refusedIsFail(() -> conn().command("EVAL", RELEASE, "1", r.key, r.token));
    if (Long.valueOf(1).equals(deleted)) return LocklabDriver.Answer.ok();
    throw new LocklabDriver.Fail("not owned");
  }

  @Override
  public LocklabDriver.Answer renew(LocklabDriver.Request r) throws Exception {
    Object extended = refusedIsFail(
        () -> conn().command("EVAL", RENEW, "1", r.key, r.token, Long.toString(r.ttlMs)));
    if (Long.valueOf(1).equals(extended)) return LocklabDriver.Answer.ok().validityMs(r.ttlMs);
    throw new LocklabDriver.Fail("not owned");
  }

  @Override
  public void close() {
    if (redis != null) redis.close();
  }

  private interface Call {
    Object run() throws Exception;
  }

  /** A refused connection sent nothing: fail. Anything else after sending: unknown. */
  private Object refusedIsFail(Call call) throws Exception {
    try {
      return call.run();
    } catch (ConnectException e) {
      redis = null;
      throw new LocklabDriver.Fail("connection refused: " + e.getMessage());
    } catch (IOException e) {
      redis = null;  // its state is unknown: a fresh connection next time
      throw new LocklabDriver.Unknown(e.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  private Resp conn() throws IOException {
    if (redis == null) {
      if (LocklabDriver.NODES.isEmpty()) throw new ConnectException("LOCKLAB_NODES is empty");
      String node = LocklabDriver.NODES.get(0);
      int colon = node.lastIndexOf(':');
      redis = new Resp(node.substring(0, colon), Integer.parseInt(node.substring(colon + 1)));
    }
    return redis;
  }

  /** The smallest Redis client a lock needs: one socket, RESP arrays out, one reply in. */
  static final class Resp {
    private final Socket socket = new Socket();
    private final OutputStream out;
    private final InputStream in;

    Resp(String host, int port) throws IOException {
      socket.connect(new InetSocketAddress(host, port), (int) LocklabDriver.CONNECT_TIMEOUT_MS);
      socket.setSoTimeout((int) LocklabDriver.COMMAND_TIMEOUT_MS);
      socket.setTcpNoDelay(true);
      out = socket.getOutputStream();
      in = new BufferedInputStream(socket.getInputStream());
    }

    /** A status or bulk string, a Long, or null; a Redis error is an IOException. */
    Object command(String... args) throws IOException {
      StringBuilder b = new StringBuilder("*").append(args.length).append("\r\n");
      for (String a : args) {
        b.append('$').append(a.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(a).append("\r\n");
      }
      out.write(b.toString().getBytes(StandardCharsets.UTF_8));
      out.flush();
      try {
        return reply();
      } catch (SocketTimeoutException e) {
        throw new SocketTimeoutException("no reply within " + LocklabDriver.COMMAND_TIMEOUT_MS + " ms");
      }
    }

    private Object reply() throws IOException {
      int type = in.read();
      String line = line();
      switch (type) {
        case '+':
          return line;
        case ':':
          return Long.parseLong(line);
        case '-':
          throw new IOException("redis: " + line);
        case '$': {
          int n = Integer.parseInt(line);
          if (n < 0) return null;
          byte[] data = in.readNBytes(n + 2);
          return new String(data, 0, n, StandardCharsets.UTF_8);
        }
        default:
          throw new IOException("unexpected reply type " + type);
      }
    }

    private String line() throws IOException {
      StringBuilder b = new StringBuilder();
      int c;
      while ((c = in.read()) != '\r') {
        if (c < 0) throw new IOException("connection closed");
        b.append((char) c);
      }
      in.read();  // '\n'
      return b.toString();
    }

    void close() {
      try {
        socket.close();
      } catch (IOException e) {
        // closing: nothing to do
      }
    }
  }

  public static void main(String[] args) {
    LocklabDriver.run(new TemplateDriver());
  }
}
