// locklab_driver: the protocol loop of a locklab lock driver (docs/driver-protocol.md), so
// that a Node.js driver is only its acquire, release and renew.
//
//   const ld = require('locklab-driver');  // npm install path/to/locklab/examples/drivers/node
//   // (or require('path/to/locklab/examples/drivers/locklab_driver.js'), the same file)
//   ld.run({
//     name: 'my lock 1.0',
//     acquire: async (req) => ({ outcome: 'ok', token, validity_ms }),  // req: the request
//     release: async (req) => ({ outcome: 'ok' }),
//     renew: async (req) => ({ outcome: 'ok', validity_ms }),         // optional
//     errors: (e) => undefined,                                        // optional
//     onClose: () => {},                                               // optional
//     ttlMs: 30000,                 // optional: the TTL the lock really sets (hello ttl_ms)
//     points: ['between-a-and-b'],  // optional: the pause points it announces with point()
//     backend: 'zookeeper', nodes: 3,  // optional: the servers the lab starts (hello)
//     sentinel: true,               // optional: finds its master through Sentinel (hello)
//     read: async (req) => ({ outcome: 'ok', value }),   // optional, with work: the driver
//     work: async (req) => ({ outcome: 'ok', value }),   // owns the resource (hello "resource")
//   });
//
// Pause points: `await ld.point('NAME')` (NAME one of run()'s points) between two steps of
// a function prints {"point":"NAME"} and resolves on the client's {"point":"NAME","go":true}:
// there the client may stop (a client-pause fault armed at NAME stops the client and this
// driver) or sleep (slow-cs). The request's deadline keeps running meanwhile.
//
// run() prints the hello ("renew": true when a renew function is given), reads requests line
// by line and answers them one at a time, in order (never two at once, as the harness never
// has two outstanding), each answer with the request's id first, on one line. A function
// returns (or resolves to) an answer object, or throws / rejects:
//   * ld.Fail(detail) / ld.Unknown(detail): that answer;
//   * anything else: errors(e) decides (an answer, or undefined), else it is `unknown` with
//     String(e) (the operation may have run: the honest default).
// An unknown op is `fail`. A line that is not JSON is logged and skipped. On EOF, once the
// answer in progress is sent, it logs "stdin closed: exiting", calls onClose() and exits 0.
//
// Timeouts: every request carries timeout_ms; req.deadline is the Date.now() time it ends
// (counted from when the line was read), req.left() the milliseconds until then, and
// req.giveUpAt() the time to stop retrying so that the answer is in time (one command
// timeout, LOCKLAB_COMMAND_TIMEOUT_MS, plus 20 ms before the deadline).
//
// Also here: the lab's environment (ld.env: nodes, ttlMs, retryDelayMs, connectTimeoutMs,
// commandTimeoutMs, process), ld.sentinel() (the sentinels, the master's name and the address
// map of a run with Sentinel, or null), ld.log() to stderr (the client's log), ld.send(),
// ld.sleep().
'use strict';

const path = require('path');
const readline = require('readline');

const PROTOCOL = 1;
const e = process.env;
const num = (v, d) => (v === undefined || v === '' || Number.isNaN(Number(v)) ? d : Number(v));
const env = {
  // The lock servers as {host, port}, through the lab's fault proxy; most locks use the first.
  nodes: (e.LOCKLAB_NODES || '').split(',').filter(Boolean).map((hp) => {
    const i = hp.lastIndexOf(':');
    return { host: hp.slice(0, i), port: Number(hp.slice(i + 1)) };
  }),
  ttlMs: num(e.LOCKLAB_TTL_MS, 1000),
  retryDelayMs: num(e.LOCKLAB_RETRY_DELAY_MS, 20),
  connectTimeoutMs: num(e.LOCKLAB_CONNECT_TIMEOUT_MS, 200),
  commandTimeoutMs: num(e.LOCKLAB_COMMAND_TIMEOUT_MS, 200),
  process: e.LOCKLAB_PROCESS || '?',
};

// What the lab hands a driver whose hello says "sentinel": true in a run with Sentinel (the
// failover fault; docs/driver-protocol.md, Sentinel), from LOCKLAB_SENTINELS,
// LOCKLAB_SENTINEL_MASTER and LOCKLAB_NODE_MAP: { sentinels: [{host, port}] (through the fault
// proxy), name: the master's name to ask them for, natMap: {'host:port' Sentinel names:
// {host, port} of this client's link to it} (ioredis's natMap: dial the link, never the
// address Sentinel names) }. Null when the run has none: then use env.nodes.
function sentinel() {
  const hostPort = (hp) => {
    const i = hp.lastIndexOf(':');
    return { host: hp.slice(0, i), port: Number(hp.slice(i + 1)) };
  };
  const sentinels = (e.LOCKLAB_SENTINELS || '').split(',').filter((hp) => hp.includes(':')).map(hostPort);
  if (sentinels.length === 0) return null;
  const natMap = {};
  for (const pair of (e.LOCKLAB_NODE_MAP || '').split(',')) {
    const [real, link] = pair.split('=');
    if (link && link.includes(':')) natMap[real] = hostPort(link);
  }
  return { sentinels, name: e.LOCKLAB_SENTINEL_MASTER || 'mymaster', natMap };
}

const logName = path.basename(process.argv[1] || 'driver').replace(/\.[^.]*$/, '');
const log = (msg) => process.stderr.write(`${logName}[${env.process}]: ${msg}\n`);
const send = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Throw (or reject with) these from a function: that outcome, with `detail`.
class Fail extends Error {}
class Unknown extends Error {}

function request(fields, started) {
  const req = Object.assign({}, fields);
  Object.defineProperties(req, {
    started: { value: started },  // Date.now() when the line was read
    deadline: { value: started + (fields.timeout_ms || 0) },
    left: { value: () => Math.max(0, req.deadline - Date.now()) },
    // When to stop retrying: the deadline less one command timeout and 20 ms (or marginMs).
    giveUpAt: {
      value: (marginMs = env.commandTimeoutMs + 20) => Math.max(started, req.deadline - marginMs),
    },
  });
  return req;
}

const declaredPoints = new Set();
let waitingPoint = null;  // {name, resolve, reject} while a point() waits for its go line

function point(name) {
  if (!declaredPoints.has(name)) {
    return Promise.reject(new Error(`point ${name} was not declared in run({points})`));
  }
  return new Promise((resolve, reject) => {
    waitingPoint = { name, resolve, reject };
    send({ point: name });
  });
}

function run({ name, acquire, release, renew, errors, onClose, ttlMs, points, backend, nodes, read, work,
  sentinel: viaSentinel }) {
  if (Boolean(read) !== Boolean(work)) {
    throw new Error('run(): give both read and work (a resource of your own), or neither');
  }
  for (const p of points || []) declaredPoints.add(p);
  const handlers = { acquire, release };
  if (renew) handlers.renew = renew;
  if (read) Object.assign(handlers, { read, work });
  const answer = async (req) => {
    const handler = Object.prototype.hasOwnProperty.call(handlers, req.op) ? handlers[req.op] : null;
    if (!handler) return { outcome: 'fail', detail: `unknown op ${req.op}` };
    try {
      return await handler(req);
    } catch (err) {
      if (err instanceof Fail) return { outcome: 'fail', detail: err.message };
      if (err instanceof Unknown) return { outcome: 'unknown', detail: err.message };
      const mapped = errors ? errors(err) : undefined;
      return mapped || { outcome: 'unknown', detail: String(err) };
    }
  };
  // One request at a time, in order (the harness never sends the next before the answer).
  let chain = Promise.resolve();
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    if (!line.trim()) return;
    const started = Date.now();
    let fields;
    try {
      fields = JSON.parse(line);
    } catch (err) {
      log(`bad request: ${line.slice(0, 100)}`);
      return;
    }
    if (fields && typeof fields === 'object' && 'point' in fields) {
      if (waitingPoint && fields.point === waitingPoint.name && fields.go === true) {
        const w = waitingPoint;
        waitingPoint = null;
        w.resolve();
      } else {
        log(`unexpected point line: ${line.slice(0, 100)}`);
      }
      return;
    }
    const req = request(fields, started);
    chain = chain.then(() => answer(req))
      .catch((err) => ({ outcome: 'unknown', detail: String(err) }))
      .then((a) => send(Object.assign({ id: req.id }, a)));
  });
  // A point() still waiting when stdin closes is rejected (below); a driver that did not await
  // it where it called it (a library callback, a .then() without a catch) would otherwise die
  // on an unhandled rejection with a stack trace: that one is a line in the log instead.
  process.on('unhandledRejection', (err) => {
    if (err instanceof Unknown && err.message.startsWith('stdin closed at point ')) {
      log(`${err.message}: the operation waiting there ended with the input`);
      return;
    }
    throw err;
  });
  rl.on('close', () => {
    if (waitingPoint) {  // the client is gone: the pending operation cannot go on
      waitingPoint.reject(new Unknown(`stdin closed at point ${waitingPoint.name}`));
      waitingPoint = null;
    }
    chain.then(() => {
      log('stdin closed: exiting');
      if (onClose) onClose();
      process.exit(0);
    });
  });
  const hello = { hello: 'locklab-driver', protocol: PROTOCOL, renew: Boolean(renew), name };
  if (ttlMs !== undefined) hello.ttl_ms = Math.trunc(ttlMs);
  if (points && points.length > 0) hello.points = points;
  if (backend !== undefined) hello.backend = backend;
  if (nodes !== undefined) hello.nodes = Math.trunc(nodes);
  if (read) hello.resource = true;
  if (viaSentinel) hello.sentinel = true;
  send(hello);
}

module.exports = { run, point, env, sentinel, log, send, sleep, Fail, Unknown, PROTOCOL };
