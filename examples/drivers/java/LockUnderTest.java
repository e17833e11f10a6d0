package locklab;

/**
 * The lock a Java driver puts under test: what {@link LocklabDriver} calls for each request of
 * the locklab driver protocol (docs/driver-protocol.md). Implement acquire and release (and
 * renew if your lock can extend a held lease); LocklabDriver does the rest (the hello, reading
 * requests, answering with the request's id, mapping exceptions to outcomes).
 *
 * Return an {@link LocklabDriver.Answer}, or throw {@link LocklabDriver.Fail} (it certainly did
 * not happen) or {@link LocklabDriver.Unknown} (it may have happened). Any other exception is
 * an `unknown` answer: a timeout or a lost connection is never a failure.
 *
 * Called from one thread (the driver's main thread), one request at a time.
 */
public interface LockUnderTest {
  /** For the hello's "name" and log lines, e.g. "Curator 5.4 InterProcessMutex". */
  String name();

  /** Take r.key for r.ttlMs, retrying until r.giveUpAtNanos(); the answer carries a token. */
  LocklabDriver.Answer acquire(LocklabDriver.Request r) throws Exception;

  /** Release the lock held with r.token; must work in a driver that did not do the acquire. */
  LocklabDriver.Answer release(LocklabDriver.Request r) throws Exception;

  /** Whether renew is implemented (the hello's "renew"). */
  default boolean renews() {
    return false;
  }

  /** Extend the lock held with r.token to r.ttlMs from now, only if still owned. */
  default LocklabDriver.Answer renew(LocklabDriver.Request r) throws Exception {
    throw new LocklabDriver.Fail("renew is not implemented");
  }

  /**
   * Whether the driver owns the guarded resource (the hello's "resource": true;
   * docs/driver-protocol.md, "Your own resource"): the workload then reads the counter with
   * read(r) (r.key, the counter) and does the critical section's write with work(r)
   * (r.fields.get("value") under r.token and r.fence), each answering Answer.ok().value(v).
   */
  default boolean ownsResource() {
    return false;
  }

  default LocklabDriver.Answer read(LocklabDriver.Request r) throws Exception {
    throw new LocklabDriver.Fail("read is not implemented");
  }

  default LocklabDriver.Answer work(LocklabDriver.Request r) throws Exception {
    throw new LocklabDriver.Fail("work is not implemented");
  }

  /** The servers the lab should start: "redis" (default), "zookeeper", "etcd", ... */
  default String backend() {
    return "redis";
  }

  /** How many of them; 0 = let the run decide. */
  default int nodes() {
    return 0;
  }

  /**
   * Called once before the hello, when LOCKLAB_NODES names the servers (not when locklab
   * starts the driver only to read its hello: LOCKLAB_PROBE is set then): connect and warm
   * up here. The hello may take
   * up to the client's start_timeout_ms, and the run's clock starts only once every client
   * said hello, so a JVM's class loading and a session's creation spent here do not eat the
   * first acquire's timeout (spent there, they made every acquire of a loaded machine's
   * trial unknown). An exception is logged and the driver goes on: the first request tries
   * again.
   */
  default void start() throws Exception {}

  /** Called once at the end (stdin closed): close connections. */
  default void close() {}
}
