#!/usr/bin/env node
// locklab lock driver: the npm `redlock` library (v4, the registry's "latest") over ioredis,
// with every lab node of LOCKLAB_NODES as a Redlock instance (one node: a single-instance
// lock with Redlock's validity arithmetic on the wall clock, Date.now()).
//
// Speaks the JSON Lines protocol of docs/driver-protocol.md on stdin/stdout; logs go to
// stderr. redlock v4 folds transport errors into "no vote"; this driver counts its
// `clientError` events per operation: a refusal with no client error is `fail`, one with a
// client error (a timeout, a lost connection: the command may have run) is `unknown`.
// Each acquire attempt is one redlock.lock() (retryCount 0); the driver retries until the
// request's deadline.
//
// Arguments (--driver-arg): --drift-factor F (default 0.01), --retry-delay-ms N (default
// LOCKLAB_RETRY_DELAY_MS).
'use strict';

const path = require('path');
const readline = require('readline');
const Redis = require(path.join(__dirname, 'node_modules', 'ioredis'));
const Redlock = require(path.join(__dirname, 'node_modules', 'redlock'));

const env = process.env;
const who = `redlock_npm[${env.LOCKLAB_PROCESS || '?'}]`;
const log = (msg) => process.stderr.write(`${who}: ${msg}\n`);
const send = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

const opts = { driftFactor: 0.01, retryDelay: Number(env.LOCKLAB_RETRY_DELAY_MS || 20) };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const v = Number(argv[i + 1]);
  if (argv[i] === '--drift-factor' && v >= 0) opts.driftFactor = v;
  else if (argv[i] === '--retry-delay-ms' && v >= 0) opts.retryDelay = v;
  else {
    log(`bad argument ${argv[i]} ${argv[i + 1]}`);
    process.exit(2);
  }
}
const commandTimeout = Number(env.LOCKLAB_COMMAND_TIMEOUT_MS || 200);
const clients = (env.LOCKLAB_NODES || '').split(',').filter(Boolean).map((hp) => {
  const i = hp.lastIndexOf(':');
  const c = new Redis({
    host: hp.slice(0, i), port: Number(hp.slice(i + 1)),
    connectTimeout: Number(env.LOCKLAB_CONNECT_TIMEOUT_MS || 200),
    commandTimeout, maxRetriesPerRequest: 0, retryStrategy: () => opts.retryDelay,
  });
  c.on('error', () => {});  // reported per operation through redlock's clientError
  return c;
});
if (clients.length === 0) {
  log('LOCKLAB_NODES is empty');
  process.exit(2);
}
const redlock = new Redlock(clients, {
  driftFactor: opts.driftFactor, retryCount: 0, retryDelay: opts.retryDelay, retryJitter: 0,
});
let clientErrors = 0;
let lastError = '';
redlock.on('clientError', (e) => { clientErrors++; lastError = String(e && e.message); });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function handle(req) {
  const started = Date.now();
  const stopAt = started + (req.timeout_ms || 0);
  const ttl = req.ttl_ms || Number(env.LOCKLAB_TTL_MS || 1000);
  const before = clientErrors;
  const transport = () => clientErrors > before;
  if (req.op === 'acquire') {
    const giveUp = Math.max(started, stopAt - commandTimeout - 20);
    for (;;) {
      try {
        const lock = await redlock.lock(req.key, ttl);
        return { outcome: 'ok', token: lock.value,
                 validity_ms: Math.max(0, lock.expiration - Date.now()) };
      } catch (e) {
        if (!(e instanceof Redlock.LockError)) throw e;
      }
      if (Date.now() + opts.retryDelay > giveUp) break;
      await sleep(opts.retryDelay);
    }
    return transport() ? { outcome: 'unknown', detail: `client error: ${lastError}` }
                       : { outcome: 'fail', detail: 'no quorum until the deadline' };
  }
  if (req.op === 'release' || req.op === 'renew') {
    const lock = new Redlock.Lock(redlock, req.key, req.token, Date.now() + ttl, 0, 0);
    try {
      if (req.op === 'release') {
        await redlock.unlock(lock);
        return { outcome: 'ok' };
      }
      const ext = await redlock.extend(lock, ttl);
      return { outcome: 'ok', validity_ms: Math.max(0, ext.expiration - Date.now()) };
    } catch (e) {
      if (!(e instanceof Redlock.LockError)) throw e;
      return transport() ? { outcome: 'unknown', detail: `client error: ${lastError}` }
                         : { outcome: 'fail', detail: e.message };
    }
  }
  return { outcome: 'fail', detail: `unknown op ${req.op}` };
}

// One request at a time, in order (the harness never sends the next before the answer).
let chain = Promise.resolve();
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (!line.trim()) return;
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    log(`bad request: ${line.slice(0, 100)}`);
    return;
  }
  chain = chain.then(() => handle(req)).catch((e) => ({ outcome: 'unknown', detail: String(e) }))
    .then((answer) => send(Object.assign({ id: req.id }, answer)));
});
rl.on('close', () => {
  chain.then(() => {
    log('stdin closed: exiting');
    clients.forEach((c) => c.disconnect());
    process.exit(0);
  });
});
send({ hello: 'locklab-driver', protocol: 1, renew: true,
       name: `npm redlock ${require(path.join(__dirname, 'node_modules', 'redlock', 'package.json')).version}` });
