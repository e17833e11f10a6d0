#!/usr/bin/env node
// locklab lock driver: the npm `redlock` library (v4, the registry's "latest") over ioredis,
// with every lab node of LOCKLAB_NODES as a Redlock instance (one node: a single-instance
// lock with Redlock's validity arithmetic on the wall clock, Date.now()).
//
// The protocol (docs/driver-protocol.md) is ../locklab_driver.js's; this file is the lock.
// redlock v4 folds transport errors into "no vote"; this driver counts its `clientError`
// events per operation: a refusal with no client error is `fail`, one with a client error
// (a timeout, a lost connection: the command may have run) is `unknown`.
// Each acquire attempt is one redlock.lock() (retryCount 0); the driver retries until the
// request's deadline.
//
// Arguments (--driver-arg): --drift-factor F (default 0.01), --retry-delay-ms N (default
// LOCKLAB_RETRY_DELAY_MS).
//
// Sentinel: the hello says "sentinel": true (run({sentinel: true})), so under the failover
// fault the lab gives it the sentinels, the master's name and the map from the addresses
// Sentinel names to its own proxy links (ld.sentinel() reads them: LOCKLAB_SENTINELS,
// LOCKLAB_SENTINEL_MASTER, LOCKLAB_NODE_MAP): its one Redlock
// instance is then ioredis's Sentinel client (`sentinels`, `name`, `natMap`), which asks the
// sentinels for the master at every reconnect. `updateSentinels: false` keeps it on the
// sentinels it was given (the others' real addresses would bypass the lab's proxy).
'use strict';

const path = require('path');
const ld = require(path.join(__dirname, '..', 'locklab_driver.js'));
const Redis = require(path.join(__dirname, 'node_modules', 'ioredis'));
const Redlock = require(path.join(__dirname, 'node_modules', 'redlock'));

const opts = { driftFactor: 0.01, retryDelay: ld.env.retryDelayMs };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const v = Number(argv[i + 1]);
  if (argv[i] === '--drift-factor' && v >= 0) opts.driftFactor = v;
  else if (argv[i] === '--retry-delay-ms' && v >= 0) opts.retryDelay = v;
  else {
    ld.log(`bad argument ${argv[i]} ${argv[i + 1]}`);
    process.exit(2);
  }
}
const connection = {
  connectTimeout: ld.env.connectTimeoutMs, commandTimeout: ld.env.commandTimeoutMs,
  maxRetriesPerRequest: 0, retryStrategy: () => opts.retryDelay,
};
const setup = ld.sentinel();
let servers = ld.env.nodes.map(({ host, port }) => Object.assign({ host, port }, connection));
if (setup !== null) {
  const { sentinels, name, natMap } = setup;
  ld.log(`Sentinel: master '${name}' from ${sentinels.length} sentinels`);
  servers = [Object.assign({
    sentinels, name, natMap, updateSentinels: false,
    sentinelCommandTimeout: ld.env.commandTimeoutMs, sentinelRetryStrategy: () => opts.retryDelay,
  }, connection)];
}
const clients = servers.map((options) => {
  const c = new Redis(options);
  c.on('error', () => {});  // reported per operation through redlock's clientError
  return c;
});
if (clients.length === 0) {
  ld.log('LOCKLAB_NODES is empty');
  process.exit(2);
}
const redlock = new Redlock(clients, {
  driftFactor: opts.driftFactor, retryCount: 0, retryDelay: opts.retryDelay, retryJitter: 0,
});
let clientErrors = 0;
let lastError = '';
redlock.on('clientError', (e) => { clientErrors++; lastError = String(e && e.message); });

// Whether a client error happened since `before` (the operation's start).
const outcomeOf = (before, failDetail) => (clientErrors > before
  ? { outcome: 'unknown', detail: `client error: ${lastError}` }
  : { outcome: 'fail', detail: failDetail });
const ttlOf = (req) => req.ttl_ms || ld.env.ttlMs;

async function acquire(req) {
  const before = clientErrors;
  const giveUp = req.giveUpAt();  // one command timeout before the deadline
  for (;;) {
    try {
      const lock = await redlock.lock(req.key, ttlOf(req));
      return { outcome: 'ok', token: lock.value,
               validity_ms: Math.max(0, lock.expiration - Date.now()) };
    } catch (e) {
      if (!(e instanceof Redlock.LockError)) throw e;
    }
    if (Date.now() + opts.retryDelay > giveUp) break;
    await ld.sleep(opts.retryDelay);
  }
  return outcomeOf(before, 'no quorum until the deadline');
}

// A Lock object for the request's key and token, so that a fresh driver can release or
// renew what another one acquired.
const lockOf = (req) => new Redlock.Lock(redlock, req.key, req.token, Date.now() + ttlOf(req), 0, 0);

async function release(req) {
  const before = clientErrors;
  try {
    await redlock.unlock(lockOf(req));
    return { outcome: 'ok' };
  } catch (e) {
    if (!(e instanceof Redlock.LockError)) throw e;
    return outcomeOf(before, e.message);
  }
}

async function renew(req) {
  const before = clientErrors;
  try {
    const ext = await redlock.extend(lockOf(req), ttlOf(req));
    return { outcome: 'ok', validity_ms: Math.max(0, ext.expiration - Date.now()) };
  } catch (e) {
    if (!(e instanceof Redlock.LockError)) throw e;
    return outcomeOf(before, e.message);
  }
}

ld.run({
  name: `npm redlock ${require(path.join(__dirname, 'node_modules', 'redlock', 'package.json')).version}`,
  acquire, release, renew, sentinel: true,
  onClose: () => clients.forEach((c) => c.disconnect()),
});
