/** runLadder over a scripted process table: what it proves, and how many /proc scans a clean end costs. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PROOF_RETRY_MS, runLadder } from '../../../lib/supervisor/child/ladder.ts';
import { createRunTracker } from '../../../lib/supervisor/child/tracker.ts';
import type { ProcStat } from '../../../lib/process/proc-stat.ts';
import type { ProcScan } from '../../../lib/process/proc-table.ts';

const SELF: ProcStat = { pid: 100, state: 'S', ppid: 1, pgid: 100, sid: 100, start: '10' };
const OPTIONS = { interrupt: false, interruptGraceMs: 0, termGraceMs: 0, killGraceMs: 0, pollMs: 1 };

function scripted(
  tables: readonly (readonly ProcStat[])[],
  vanished: readonly (readonly number[])[] = [],
): { scan: () => ProcScan; scans: () => number } {
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
  const outcome = await runLadder(
    { selfPid: SELF.pid, groupMode: true, tracker, scan: table.scan, nativeExited: () => true, interruptNative: () => {} },
    OPTIONS,
  );
  assert.deepEqual(outcome, { survivors: [], steps: [], error: null });
  assert.equal(table.scans(), 2);
});

test('a group member seen only by the second scan is not proven gone by the first', async () => {
  // A process that stays: it is the run's (the supervisor's group), so it must be reported, whatever it costs.
  const stray: ProcStat = { pid: 4_194_400, state: 'S', ppid: 1, pgid: SELF.pid, sid: SELF.sid, start: '20' };
  const table = scripted([[], [stray]]);
  const tracker = createRunTracker({ selfPid: SELF.pid, groupMode: true, roots: [], marker: null });
  const outcome = await runLadder(
    { selfPid: SELF.pid, groupMode: false, tracker, scan: table.scan, nativeExited: () => true, interruptNative: () => {} },
    OPTIONS,
  );
  assert.deepEqual(outcome.survivors, [{ pid: stray.pid, start: stray.start }]);
  assert.ok(table.scans() > 2);
});

test('a scan whose listed pid vanished before it was read proves nothing unless that pid was a settled stranger', async () => {
  const stranger: ProcStat = { pid: 300, state: 'S', ppid: 1, pgid: 300, sid: 300, start: '5' };
  // Every scan lists an unknown pid that is gone when read (a run process that may have forked): never proven.
  const unknown = scripted([[]], [[4_000]]);
  const tracker = createRunTracker({ selfPid: SELF.pid, groupMode: true, roots: [], marker: null });
  const outcome = await runLadder(
    { selfPid: SELF.pid, groupMode: true, tracker, scan: unknown.scan, nativeExited: () => true, interruptNative: () => {} },
    OPTIONS,
  );
  assert.deepEqual(outcome.survivors, []);
  assert.match(outcome.error ?? '', /no two consecutive scans could show the run gone/);
  // A stranger the scan before had settled dies meanwhile: nothing of the run can have forked there.
  const known = scripted([[stranger], [], []], [[], [stranger.pid], []]);
  const second = createRunTracker({ selfPid: SELF.pid, groupMode: true, roots: [], marker: null });
  const proven = await runLadder(
    { selfPid: SELF.pid, groupMode: true, tracker: second, scan: known.scan, nativeExited: () => true, interruptNative: () => {} },
    OPTIONS,
  );
  assert.deepEqual(proven, { survivors: [], steps: [], error: null });
});

test('a run process that became a zombie since the scan before makes that scan no proof', async () => {
  const child: ProcStat = { pid: 500, state: 'S', ppid: SELF.pid, pgid: SELF.pid, sid: SELF.sid, start: '30' };
  const zombie: ProcStat = { ...child, state: 'Z' };
  const table = scripted([[child], [zombie], [zombie], []]);
  const tracker = createRunTracker({ selfPid: SELF.pid, groupMode: true, roots: [], marker: null });
  await runLadder(
    { selfPid: SELF.pid, groupMode: true, tracker, scan: table.scan, nativeExited: () => true, interruptNative: () => {} },
    { ...OPTIONS, killGraceMs: 50 },
  );
  // Scan 2 (first zombie read) cannot count; scans 3 and 4 are the proof.
  assert.ok(table.scans() >= 4, String(table.scans()));
});

test('nothing of the run seen but no proof yet: the ladder keeps scanning up to PROOF_RETRY_MS for two clean scans', async () => {
  // Other jobs' processes vanish mid-scan for the first five scans, then the machine quiets down.
  const churn = scripted([[], [], [], [], [], [], []], [[4_001], [4_002], [4_003], [4_004], [4_005]]);
  const tracker = createRunTracker({ selfPid: SELF.pid, groupMode: true, roots: [], marker: null });
  const outcome = await runLadder(
    { selfPid: SELF.pid, groupMode: true, tracker, scan: churn.scan, nativeExited: () => true, interruptNative: () => {} },
    OPTIONS,
  );
  assert.deepEqual([outcome.survivors, outcome.error], [[], null]);
  assert.ok(churn.scans() >= 7, `${churn.scans()} scans`);
  // Churn that never stops: honestly unconfirmed once the retry bound has passed, not sooner.
  const endless = { scan: (): ProcScan => ({ table: [SELF], vanished: [Math.floor(Math.random() * 1e6) + 5_000], durationMs: 1 }) };
  const started = performance.now();
  const second = createRunTracker({ selfPid: SELF.pid, groupMode: true, roots: [], marker: null });
  const unproven = await runLadder(
    { selfPid: SELF.pid, groupMode: true, tracker: second, scan: endless.scan, nativeExited: () => true, interruptNative: () => {} },
    OPTIONS,
  );
  assert.match(unproven.error ?? '', /no two consecutive scans could show the run gone/);
  assert.ok(performance.now() - started >= PROOF_RETRY_MS, 'it kept trying for the whole bound');
});
