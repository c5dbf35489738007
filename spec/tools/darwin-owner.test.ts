import { test } from 'node:test';
import assert from 'node:assert/strict';
import { darwinSelfOwner, DARWIN_PID_SPACE } from '../../lib/tools/darwin-owner.ts';

test('the darwin owner: pid space "0", a boot of zeros, the start second from the clock less the uptime (rounded down)', () => {
  assert.deepEqual(darwinSelfOwner(Date.parse('2026-12-03T17:16:50.400Z'), 2.2, 10), {
    pidNamespace: '0',
    boot: '0000000000000000',
    pid: 10,
    start: String(Math.floor(Date.parse('2026-12-03T17:16:48.200Z') / 1000)),
  });
  assert.equal(DARWIN_PID_SPACE.pidNamespace, '0');
});
