/**
 * The escape classes of spec/faults/escape-cases.ts against a server run as on a Mac (spec/helpers/darwin-server.ts):
 * the portable source (ps_scan) is the run's only backend. Its rule: a run is confirmed only when nothing of it
 * lives; an escapee it cannot attribute is reported, never signalled, and the run is then not confirmed. And
 * no server or supervisor process touches /proc, /sys or a cgroup while it cleans up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertDarwinTrace, withDarwinServer } from '../helpers/darwin-server.ts';
import { readProcStat, readReadyLines, waitForReady } from '../helpers/proc.ts';
import { isJsonObject } from '../helpers/typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import { aliveNaming } from './escape-helpers.ts';
import { ESCAPE_CASES } from './escape-cases.ts';

/** Confirmed only with nothing alive; otherwise unconfirmed with an error that says why, and the run an error. */
function assertHonest(full: JsonObject, isError: boolean, alive: readonly number[]): void {
  assert.equal(full['cleanup_proof'], 'ps_scan');
  if (full['cleanup_confirmed'] === true) {
    assert.deepEqual(alive, [], 'confirmed while a process of the run lives');
    return;
  }
  assert.equal(full['cleanup_confirmed'], false);
  const error = full['cleanup_error'];
  assert.ok(isJsonObject(error) && typeof error['code'] === 'string', JSON.stringify(error));
  assert.equal(isError, true, 'an unconfirmed cleanup is an error of the run');
}

for (const c of ESCAPE_CASES.filter((k) => k.only === undefined)) {
  const kinds = c.escape.split(',');
  test(`darwin (ps_scan): escape: ${c.name}: confirmed only when nothing lives, and no Linux-only access`, async () => {
    const env = { FAKE_CLAUDE_SCENARIO: 'escape', FAKE_CLAUDE_ESCAPE: c.escape, FAKE_CLAUDE_ESCAPE_EXIT_FIRST: c.exitFirst ? '1' : '0' };
    const { verdict } = await withDarwinServer(env, async (darwin, ready) => {
      const out = await darwin.call('claude.run', { prompt: 'x', cwd: darwin.dir });
      const alive = aliveNaming(ready);
      assertHonest(await darwin.full(out.result?.['run_id']), out.isError, alive);
      if (!c.exitFirst && !kinds.includes('term_trap')) {
        // The escape really happened before the run ended: every escapee announced itself.
        const escapees = readReadyLines(ready).filter((l) => l.ready === 'escapee');
        assert.equal(escapees.length, kinds.length, JSON.stringify(escapees));
      }
    });
    assertDarwinTrace(verdict);
  });
}

test('darwin (ps_scan): kill -9 of the supervisor while the run has escaped children: the run settles unconfirmed, supervisor_failed, its proof named ps_scan', async () => {
  const env = {
    FAKE_CLAUDE_SCENARIO: 'escape',
    FAKE_CLAUDE_ESCAPE: 'bash_bg,bash_setsid,double_fork',
    FAKE_CLAUDE_ESCAPE_HOLD: 'exit_with_parent',
  };
  const { verdict } = await withDarwinServer(env, async (darwin, ready) => {
    const started = await darwin.call('claude.run.start', { prompt: 'x', cwd: darwin.dir });
    const runId = String(started.result?.['run_id']);
    const native = await waitForReady(ready, 'escaped');
    const supervisorPid = readProcStat(native.pid)?.ppid;
    assert.ok(supervisorPid !== undefined && supervisorPid > 1);
    process.kill(supervisorPid, 'SIGKILL');
    const result = await darwin.full(runId);
    assert.equal(result['completed'], true);
    assert.equal(result['cleanup_confirmed'], false);
    const error = result['cleanup_error'];
    assert.ok(isJsonObject(error) && error['code'] === 'supervisor_failed', JSON.stringify(error));
    // Named by what the adapter's fallback looked with: one ps table (the trace below shows no /proc read).
    assert.equal(result['cleanup_proof'], 'ps_scan');
  });
  assertDarwinTrace(verdict);
});
