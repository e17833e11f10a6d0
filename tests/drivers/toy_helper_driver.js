#!/usr/bin/env node
// A lock driver on examples/drivers/locklab_driver.js with an in-memory lock (no server),
// for tests/drivers/helpers_test.py: the same keys as toy_helper_driver.py.
'use strict';

const path = require('path');
const crypto = require('crypto');
const ld = require(path.join(__dirname, '..', '..', 'examples', 'drivers', 'locklab_driver.js'));

const held = new Map();

async function acquire(req) {
  const kind = req.key.startsWith('raise:') ? req.key.slice(6) : '';
  if (kind === 'fail') throw new ld.Fail('refused on purpose');
  if (kind === 'unknown') throw new ld.Unknown('lost on purpose');
  if (kind === 'mapped') throw new RangeError('mapped on purpose');
  if (kind === 'other') throw new TypeError('broken on purpose');
  if (req.key === 'times') {
    return { outcome: 'fail',
             detail: `${((req.deadline - req.started) / 1000).toFixed(3)} ${((req.deadline - req.giveUpAt()) / 1000).toFixed(3)}` };
  }
  if (req.key.startsWith('slow:')) await ld.sleep(Number(req.key.slice(5)));
  if (held.has(req.key)) return { outcome: 'fail', detail: 'held' };
  held.set(req.key, crypto.randomBytes(16).toString('hex'));
  return { outcome: 'ok', token: held.get(req.key), validity_ms: req.ttl_ms };
}

async function release(req) {
  if (held.get(req.key) !== req.token) throw new ld.Fail('not owned');
  held.delete(req.key);
  return { outcome: 'ok' };
}

ld.run({
  name: 'toy',
  acquire,
  release,
  renew: process.argv.includes('--no-renew') ? undefined : async () => ({ outcome: 'ok' }),
  errors: (e) => (e instanceof RangeError ? { outcome: 'fail', detail: `mapped: ${e.message}` } : undefined),
  onClose: () => ld.log('on_close called'),
});
