/** runLadder over a scripted process table: what it proves, and how many /proc scans a clean end costs. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runLadder } from '../../lib/supervisor/child/ladder.ts';
import { createRunTracker } from '../../lib/supervisor/child/tracker.ts';
import type { ProcStat } from '../../lib/process/proc-stat.ts';
import type { ProcScan } from '../../lib/process/proc-table.ts';

const SELF: ProcStat = { pid: 100, state: 'S', ppid: 1, pgid: 100, sid: 100, start: '10' };
const OPTIONS = { interrupt: false, interruptGraceMs: 0, termGraceMs: 0, killGraceMs: 0, pollMs: 1 };

function scripted(tables: readonly (readonly ProcStat[])[], vanished: readonly (readonly number[])[] = []): { scan: () => ProcScan; scans: () => number } {
  let scans = 0;
  return {
    scan: () => {
      const at = Math.min(scans++, tables.length - 1);
      return { table: [SELF, ...(tables[at] ?? [])], vanished: [...(vanished[at] ?? [])], durationMs: 1 };
    },
    scans: () => scans,
  };
}

test('a native that exited leaving nothing: proven by two consecutive empty scans, and no more are made', async () => {
  const table = scripted([[]]);
  const tracker = createRunTracker({ selfPid: SELF.pid, groupMode: true, roots: [], marker: null });
  const outcome = await runLadder({ selfPid: SELF.pid, groupMode: true, tracker, scan: table.scan, nativeExited: () => true, interruptNative: () => {} }, OPTIONS);
  assert.deepEqual(outcome, { survivors: [], steps: [], error: null });
  assert.equal(table.scans(), 2);
});

test('a group member seen only by the second scan is not proven gone by the first', async () => {
  // A process that stays: it is the run's (the supervisor's group), so it must be reported, whatever it costs.
  const stray: ProcStat = { pid: 4_194_400, state: 'S', ppid: 1, pgid: SELF.pid, sid: SELF.sid, start: '20' };
  const table = scripted([[], [stray]]);
  const tracker = createRunTracker({ selfPid: SELF.pid, groupMode: true, roots: [], marker: null });
  const outcome = await runLadder({ selfPid: SELF.pid, groupMode: false, tracker, scan: table.scan, nativeExited: () => true, interruptNative: () => {} }, OPTIONS);
  assert.deepEqual(outcome.survivors, [{ pid: stray.pid, start: stray.start }]);
  assert.ok(table.scans() > 2);
});
