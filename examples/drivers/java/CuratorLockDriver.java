import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import locklab.LockUnderTest;
import locklab.LocklabDriver;

/**
 * locklab lock driver: Apache Curator's InterProcessMutex (Debian libcurator-recipes-java 5.4)
 * on the lab's ZooKeeper ensemble. The protocol is LocklabDriver's; this class is the lock.
 *
 * The hello asks for 3 ZooKeeper servers; LOCKLAB_NODES lists them (through the fault proxy)
 * and Curator's client gets all of them. The mutex is Curator's: an ephemeral sequential node
 * under /locklab-locks/KEY, lowest holds it, the others watch their predecessor. The lease is
 * the ZooKeeper session, whose timeout is the lab's TTL (the ensemble may round it: validity_ms
 * says what it granted); the client's own heartbeat thread keeps it alive, so renew is not
 * offered. A paused JVM (SIGSTOP of the client's group) sends no heartbeat: its session and
 * lock node expire while it still believes it holds the lock.
 *
 * Token: the lock node's path (InterProcessMutex.getLockPath). Release deletes that node, so it
 * works in a driver that did not acquire (a restarted one); a node already gone is `fail`.
 *
 * Outcomes: Curator retries nothing (RetryNTimes(0)), so a connection loss or a session expiry
 * reaches us as an exception: `unknown` (the create or delete may have happened). An acquire
 * that times out returns false after Curator deleted its own node: `fail` (if that delete
 * fails, Curator throws: `unknown`). Not connected before the deadline: `fail` (nothing sent).
 *
 * Arguments (--driver-arg): --fence  also answer the lock node's czxid as a fencing token.
 */
public final class CuratorLockDriver implements LockUnderTest {
  static final String ROOT = "/locklab-locks";

  /** InterProcessMutex, with the path of the node it holds made visible (getLockPath). */
  static final class Mutex extends InterProcessMutex {
    Mutex(CuratorFramework client, String path) {
      super(client, path);
    }

    String node() {
      return getLockPath();
    }
  }

  private final boolean fence;
  private CuratorFramework client;  // built in start(), or on first use when that failed

  CuratorLockDriver(boolean fence) {
    this.fence = fence;
  }

  @Override
  public String name() {
    return "Curator " + curatorVersion() + " InterProcessMutex";
  }

  /** From the recipes jar's Maven properties (Debian's manifest has no version). */
  static String curatorVersion() {
    try (java.io.InputStream in = InterProcessMutex.class.getResourceAsStream(
             "/META-INF/maven/org.apache.curator/curator-recipes/pom.properties")) {
      java.util.Properties p = new java.util.Properties();
      if (in != null) p.load(in);
      return p.getProperty("version", "5.x");
    } catch (java.io.IOException e) {
      return "5.x";
    }
  }

  @Override
  public String backend() {
    return "zookeeper";
  }

  @Override
  public int nodes() {
    return 3;
  }

  private void build() throws Exception {
    if (client != null) return;
    if (LocklabDriver.NODES.isEmpty()) throw new LocklabDriver.Fail("LOCKLAB_NODES is empty");
    client = CuratorFrameworkFactory.builder()
                 .connectString(String.join(",", LocklabDriver.NODES))
                 .sessionTimeoutMs((int) LocklabDriver.TTL_MS)
                 .connectionTimeoutMs((int) Math.max(1000, LocklabDriver.CONNECT_TIMEOUT_MS))
                 .retryPolicy(new RetryNTimes(0, 0))
                 .build();
    client.start();
  }

  /**
   * Before the hello: connect, and take and drop a lock on a path of its own, so that the
   * JVM has loaded and compiled the recipe's code before the run's first acquire (on a
   * loaded 2-core machine that took longer than the acquire's 1 s timeout).
   */
  @Override
  public void start() throws Exception {
    build();
    if (!client.blockUntilConnected(15, TimeUnit.SECONDS)) {
      throw new Exception("not connected to ZooKeeper within 15 s");
    }
    Mutex warm = new Mutex(client, "/locklab-warm-up");
    if (warm.acquire(5, TimeUnit.SECONDS)) warm.release();
    LocklabDriver.log("started: connected, session timeout " +
                      client.getZookeeperClient().getZooKeeper().getSessionTimeout() + " ms");
  }

  /** Connected before the deadline, or Fail: nothing was sent for this request yet. */
  private void connected(LocklabDriver.Request r) throws Exception {
    build();
    if (client.getZookeeperClient().isConnected()) return;
    long wait = Math.max(0, r.leftMs() - LocklabDriver.COMMAND_TIMEOUT_MS);
    if (!client.blockUntilConnected((int) wait, TimeUnit.MILLISECONDS)) {
      throw new LocklabDriver.Fail("not connected to ZooKeeper (" +
                                   String.join(",", LocklabDriver.NODES) + ") before the deadline");
    }
    LocklabDriver.log("connected: session timeout " +
                      client.getZookeeperClient().getZooKeeper().getSessionTimeout() +
                      " ms (asked " + LocklabDriver.TTL_MS + ")");
  }

  @Override
  public LocklabDriver.Answer acquire(LocklabDriver.Request r) throws Exception {
    connected(r);
    Mutex m = new Mutex(client, ROOT + "/" + r.key);
    long waitMs = Math.max(0, (r.giveUpAtNanos() - System.nanoTime()) / 1_000_000L);
    if (!m.acquire(waitMs, TimeUnit.MILLISECONDS)) {
      return LocklabDriver.Answer.fail("lock held until the deadline");
    }
    String token = m.node();
    LocklabDriver.Answer a = LocklabDriver.Answer.ok(token).validityMs(
        client.getZookeeperClient().getZooKeeper().getSessionTimeout());
    if (fence) {
      Stat st;
      try {
        st = client.checkExists().forPath(token);
      } catch (Exception e) {
        // We hold the lock but cannot read its token, and the harness releases only what it
        // was told it holds: give the node up (a guaranteed delete retries in the background
        // until it reaches the ensemble; the session, kept alive by Curator, would otherwise
        // hold the key until this driver exits), then answer unknown.
        client.delete().guaranteed().inBackground().forPath(token);
        throw new LocklabDriver.Unknown("acquired " + token + " but its fence could not be read ("
                                        + e + "); its node was given up");
      }
      if (st == null) throw new LocklabDriver.Unknown("lock node " + token + " vanished right after the acquire");
      a.fence(st.getCzxid());
    }
    return a;
  }

  @Override
  public LocklabDriver.Answer release(LocklabDriver.Request r) throws Exception {
    connected(r);
    try {
      client.delete().forPath(r.token);
    } catch (KeeperException.NoNodeException e) {
      throw new LocklabDriver.Fail("not owned: lock node " + r.token + " is gone (session expired?)");
    }
    return LocklabDriver.Answer.ok();
  }

  @Override
  public void close() {
    if (client != null) client.close();
  }

  public static void main(String[] args) {
    boolean fence = false;
    for (String a : args) {
      if (a.equals("--fence")) {
        fence = true;
      } else {
        System.err.println("CuratorLockDriver: unknown argument '" + a + "' (known: --fence)");
        System.exit(64);
      }
    }
    LocklabDriver.run(new CuratorLockDriver(fence));
  }
}
