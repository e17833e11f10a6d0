/**
 * A template for your own Java lock as a locklab lock driver: copy this file, fill in the
 * TODOs with your Jedis / Redisson / Lettuce code, and run it with
 *
 *   ./locklab run --lock driver:examples/drivers/java/template_driver --fault client-pause
 *
 * (README.md in this folder: how to build it with your jars on the classpath). As shipped it
 * compiles and says hello, and answers every acquire `fail` ("not implemented"): the lab then
 * reports the run as granting no acquire.
 *
 * Rules (docs/driver-protocol.md "Writing a driver: checklist"):
 *  - acquire retries until r.giveUpAtNanos() and answers ok with the owner token it wrote;
 *  - fail only when it certainly did not happen; a timeout or a connection lost after
 *    sending is unknown: throw LocklabDriver.Unknown, or just let the exception out;
 *  - release (and renew) work from r.key and r.token alone, in a fresh process;
 *  - release stops any watchdog your library runs for that lock (Redisson's does).
 */
public final class TemplateDriver implements LockUnderTest {
  // TODO: your client, e.g.
  //   private final JedisPool pool = new JedisPool(host, port);
  // with host and port from LocklabDriver.NODES.get(0) ("host:port", through the fault proxy)
  // and timeouts from LocklabDriver.CONNECT_TIMEOUT_MS / COMMAND_TIMEOUT_MS.

  @Override
  public String name() {
    return "template (not implemented)";  // TODO: your lock's name and version
  }

  @Override
  public LocklabDriver.Answer acquire(LocklabDriver.Request r) throws Exception {
    // TODO: e.g. with Jedis:
    //   String token = java.util.UUID.randomUUID().toString();
    //   while (true) {
    //     if ("OK".equals(jedis.set(r.key, token, SetParams.setParams().nx().px(r.ttlMs))))
    //       return LocklabDriver.Answer.ok(token).validityMs(r.ttlMs);
    //     if (System.nanoTime() + LocklabDriver.RETRY_DELAY_MS * 1_000_000L > r.giveUpAtNanos())
    //       return LocklabDriver.Answer.fail("held until the deadline");
    //     Thread.sleep(LocklabDriver.RETRY_DELAY_MS);
    //   }
    return LocklabDriver.Answer.fail("not implemented: fill in TemplateDriver.acquire");
  }

  @Override
  public LocklabDriver.Answer release(LocklabDriver.Request r) throws Exception {
    // TODO: delete r.key only if it still holds r.token (a Lua compare-and-delete); not owned
    // any more: throw new LocklabDriver.Fail("not owned").
    throw new LocklabDriver.Fail("not implemented: fill in TemplateDriver.release");
  }

  // TODO (optional): renews() returning true and renew(r) extending r.key to r.ttlMs if it
  // still holds r.token. A lock whose library renews on its own (a watchdog) leaves them out.

  // TODO (optional): backend() and nodes() if your lock needs other servers than one Redis,
  // e.g. "zookeeper" and 3 (CuratorLockDriver), or nodes() 5 for a Redlock.

  public static void main(String[] args) {
    LocklabDriver.run(new TemplateDriver());
  }
}
