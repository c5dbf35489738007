/**
 * The ways real tools leave processes behind, against the real process table: a Bash-tool shell (its own
 * session) that backgrounds a job with `cmd &`, `nohup cmd &` or `setsid cmd &` and exits; a new process
 * group inside the supervisor's session whose parent exits at once; a double-forked daemon; a native that
 * forks and exits before the first tracking scan. For each: the run reports cleanup confirmed only when
 * nothing whose command line names this test's private ready file is alive any more.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolHarness } from '../helpers/tool-harness.ts';
import { readProcStat, readReadyLines, waitForReady } from '../helpers/proc.ts';
import { cmdlineOf } from './proc-helpers.ts';
import { createRandom } from './schema-cases.ts';
import { setTimeout as delay } from 'node:timers/promises';
import { isLive } from '../../lib/process/proc-stat.ts';
import { readProcTable } from '../../lib/process/proc-table.ts';

const TRIALS = 2;

/** Live processes whose argv mentions `marker` (every escapee carries its ready file's path in argv). */
function aliveNaming(marker: string): number[] {
  return readProcTable().filter((s) => isLive(s) && s.pid !== process.pid && cmdlineOf(s.pid).includes(marker)).map((s) => s.pid);
}

function killPids(pids: readonly number[]): void {
  for (const pid of pids) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
}

const CASES: readonly { readonly name: string; readonly escape: string; readonly exitFirst?: boolean }[] = [
  { name: 'a Bash-tool job `cmd &` that outlives its shell', escape: 'bash_bg' },
  { name: 'a Bash-tool job `nohup cmd &`', escape: 'bash_nohup' },
  { name: 'a Bash-tool job `setsid cmd &`', escape: 'bash_setsid' },
  { name: 'a new process group in the supervisor session whose parent exits at once', escape: 'new_group' },
  { name: 'a double-forked daemon', escape: 'double_fork' },
  { name: 'a setsid child of a native that exits before the first scan', escape: 'bash_setsid', exitFirst: true },
  { name: 'a daemon of a native that exits before the first scan', escape: 'double_fork', exitFirst: true },
  { name: 'all of them at once', escape: 'bash_bg,bash_nohup,bash_setsid,new_group,double_fork' },
  { name: 'a new session with a scrubbed environment (no marker) whose parent lingers past a scan', escape: 'scrubbed_lingering' },
];

for (const c of CASES) {
  test(`escape: ${c.name} is ended and the run proves it`, async () => {
    const kinds = c.escape.split(',');
    for (let trial = 0; trial < TRIALS; trial++) {
      const scratch = mkdtempSync(join(tmpdir(), 'crm-escape-'));
      const ready = join(scratch, 'ready.jsonl');
      const h = await createToolHarness({
        env: { FAKE_CLAUDE_SCENARIO: 'escape', FAKE_CLAUDE_ESCAPE: c.escape, FAKE_CLAUDE_ESCAPE_EXIT_FIRST: c.exitFirst ? '1' : '0', FAKE_CLAUDE_READY_FILE: ready },
      });
      try {
        const out = await h.call('claude.run', { prompt: 'x', cwd: h.dir });
        const left = aliveNaming(ready);
        assert.deepEqual(left, [], `trial ${trial}: alive after the run reported (${JSON.stringify(out.result?.['cleanup_confirmed'])})`);
        assert.equal(out.isError, false, out.text.slice(0, 400));
        assert.equal(out.result?.['cleanup_confirmed'], true, JSON.stringify(out.result?.['cleanup_error']));
        if (!c.exitFirst) {
          // The escape really happened before the run ended: every escapee announced itself.
          const escapees = readReadyLines(ready).filter((l) => l.ready === 'escapee');
          assert.equal(escapees.length, kinds.length, JSON.stringify(escapees));
        }
      } finally {
        killPids(aliveNaming(ready));
        await h.close();
        rmSync(scratch, { recursive: true, force: true });
      }
    }
  });
}

test('kill -9 of the supervisor while the run has escaped children, the native exiting that instant: the adapter ends them all, reported unconfirmed', async () => {
  for (let trial = 0; trial < 4; trial++) {
    const scratch = mkdtempSync(join(tmpdir(), 'crm-escape-'));
    const ready = join(scratch, 'ready.jsonl');
    const h = await createToolHarness({
      env: { FAKE_CLAUDE_SCENARIO: 'escape', FAKE_CLAUDE_ESCAPE: 'bash_bg,bash_setsid,double_fork', FAKE_CLAUDE_ESCAPE_HOLD: 'exit_with_parent', FAKE_CLAUDE_READY_FILE: ready },
    });
    try {
      const started = await h.call('claude.run.start', { prompt: 'x', cwd: h.dir });
      const runId = String(started.result?.['run_id']);
      const native = await waitForReady(ready, 'escaped');
      const supervisorPid = readProcStat(native.pid)?.ppid;
      assert.ok(supervisorPid !== undefined && supervisorPid > 1);
      process.kill(supervisorPid, 'SIGKILL');
      let result: Record<string, unknown> = {};
      while (result['completed'] !== true) result = (await h.call('claude.run.result', { run_id: runId, wait_seconds: 10 })).result ?? {};
      assert.deepEqual(aliveNaming(ready), [], `trial ${trial}`);
      assert.equal(result['cleanup_confirmed'], false);
      assert.equal((result['cleanup_error'] as Record<string, unknown> | null)?.['code'], 'supervisor_failed');
    } finally {
      killPids(aliveNaming(ready));
      await h.close();
      rmSync(scratch, { recursive: true, force: true });
    }
  }
});

const CAMPAIGN_SEED = 0x0e5c_a9e5;
const CAMPAIGN_TRIALS = 12;
const KINDS = ['bash_bg', 'bash_nohup', 'bash_setsid', 'new_group', 'double_fork', 'scrubbed_lingering'] as const;

test(`seeded escape campaign: ${CAMPAIGN_TRIALS} runs mixing escapes, version-check leftovers, early exits and cancels`, async (t) => {
  const random = createRandom(CAMPAIGN_SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  t.diagnostic(`seed ${CAMPAIGN_SEED}`);
  let escapeesEnded = 0;
  let falseConfirmations = 0;
  for (let trial = 0; trial < CAMPAIGN_TRIALS; trial++) {
    const kinds = KINDS.filter(() => random() < 0.4);
    if (kinds.length === 0) kinds.push(pick(KINDS));
    // A scrubbed environment in a new session whose parent (the native) exits before the first scan is the
    // documented limit (docs/supervisor.md): the exit-first trials leave it out.
    const exitFirst = random() < 0.25 && !kinds.includes('scrubbed_lingering');
    const versionLeaves = random() < 0.3 ? pick(KINDS.filter((k) => k !== 'scrubbed_lingering')) : null;
    const cancelAtMs = !exitFirst && random() < 0.5 ? Math.floor(random() * 600) : null;
    const scratch = mkdtempSync(join(tmpdir(), 'crm-escape-'));
    const ready = join(scratch, 'ready.jsonl');
    const h = await createToolHarness({
      env: {
        FAKE_CLAUDE_SCENARIO: 'escape', FAKE_CLAUDE_ESCAPE: kinds.join(','), FAKE_CLAUDE_ESCAPE_EXIT_FIRST: exitFirst ? '1' : '0',
        FAKE_CLAUDE_ESCAPE_HOLD: cancelAtMs === null ? '' : 'hang', FAKE_CLAUDE_READY_FILE: ready,
        ...(versionLeaves === null ? {} : { FAKE_CLAUDE_VERSION_MODE: versionLeaves }),
      },
    });
    try {
      const started = await h.call('claude.run.start', { prompt: `trial ${trial}`, cwd: h.dir });
      const runId = String(started.result?.['run_id']);
      if (cancelAtMs !== null) {
        await delay(cancelAtMs);
        await h.call('claude.run.cancel', { run_id: runId });
      }
      let result: Record<string, unknown> = {};
      while (result['completed'] !== true) result = (await h.call('claude.run.result', { run_id: runId, wait_seconds: 10 })).result ?? {};
      const left = aliveNaming(ready);
      if (left.length > 0 && result['cleanup_confirmed'] === true) falseConfirmations++;
      assert.deepEqual(left, [], `trial ${trial}: ${kinds.join(',')} exitFirst=${exitFirst} version=${versionLeaves} cancel=${cancelAtMs}`);
      assert.equal(result['cleanup_confirmed'], true, `trial ${trial}: ${JSON.stringify(result['cleanup_error'])}`);
      escapeesEnded += readReadyLines(ready).filter((l) => l.ready === 'escapee').length;
      t.diagnostic(`trial ${trial}: ${kinds.join(',')}${exitFirst ? ' exit-first' : ''}${versionLeaves ? ` version-leaves=${versionLeaves}` : ''}${cancelAtMs === null ? '' : ` cancel@${cancelAtMs}ms`} -> confirmed, nothing left`);
    } finally {
      killPids(aliveNaming(ready));
      await h.close();
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  t.diagnostic(`${CAMPAIGN_TRIALS} trials, ${escapeesEnded} escaped processes announced and ended, ${falseConfirmations} false confirmations`);
  assert.equal(falseConfirmations, 0);
});
