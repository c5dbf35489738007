/** The darwin fallback's plan over one ps table: only the reported native is ended; the rest is reported. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planPortableFallback } from '../../../lib/supervisor/parent/fallback-kill.ts';
import type { PsRow } from '../../../lib/process/ps-table.ts';

const row = (pid: number, ppid: number, pgid: number, lstart: string | null = '2026-12-03T17:16:48', stat = 'S'): PsRow => ({
  pid,
  ppid,
  pgid,
  stat,
  start: lstart === null ? null : { lstart, resolution: 'second' },
  command: 'x',
});

const SUPERVISOR = 100;
const native = { pid: 101, start: '2026-12-03T17:16:48' };

test('the native is ended only when the table shows the very identity the supervisor reported', () => {
  assert.deepEqual(planPortableFallback([row(101, 1, SUPERVISOR)], SUPERVISOR, native).kill, native);
  assert.equal(
    planPortableFallback([row(101, 1, SUPERVISOR, '2026-12-03T17:16:49')], SUPERVISOR, native).kill,
    null,
    'another start second',
  );
  assert.equal(planPortableFallback([row(101, 1, SUPERVISOR, null)], SUPERVISOR, native).kill, null, 'no start shown');
  assert.equal(planPortableFallback([row(101, 1, SUPERVISOR, undefined, 'Z')], SUPERVISOR, native).kill, null, 'a zombie');
  assert.equal(planPortableFallback([], SUPERVISOR, native).kill, null, 'gone');
  assert.equal(planPortableFallback([row(101, 1, SUPERVISOR)], SUPERVISOR, null).kill, null, 'nothing reported: nothing ended');
});

test("everything else linked to the run is listed, never ended: the supervisor's group and descendants of either", () => {
  const rows = [
    row(101, SUPERVISOR, SUPERVISOR),
    row(102, 101, SUPERVISOR),
    row(103, 1, SUPERVISOR), // re-parented, still in the group
    row(104, 102, 104), // a setsid child of a group member
    row(105, 104, 104),
    row(106, 1, 106), // a stranger
    row(107, 101, SUPERVISOR, undefined, 'Z'), // a zombie is nothing to report
  ];
  const plan = planPortableFallback(rows, SUPERVISOR, native);
  assert.deepEqual(plan.kill, native);
  assert.deepEqual(plan.left, [102, 103, 104, 105]);
  const unproven = planPortableFallback([row(101, SUPERVISOR, SUPERVISOR, '2026-12-03T17:16:49'), ...rows.slice(1)], SUPERVISOR, native);
  assert.equal(unproven.kill, null);
  assert.deepEqual(unproven.left, [101, 102, 103, 104, 105], 'a native not proven by its start is listed, not ended');
});
