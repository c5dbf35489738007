/**
 * The version check as on a Mac (spec/helpers/darwin-server.ts): what the check leaves behind is the run's to
 * end under ps_scan, confirmed only when nothing of it lives; a failing check is still reported as the version
 * error; a cancel during a hanging check ends it. The proof rests on the file at best (no /proc image there),
 * and no server or supervisor process touches /proc, /sys or a cgroup.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertDarwinTrace, withDarwinServer } from '../helpers/darwin-server.ts';
import { readReadyLines, waitForGone, waitForReady } from '../helpers/proc.ts';
import { isJsonObject } from '../helpers/typed-results.ts';
import { aliveNaming, errorCode } from './escape-helpers.ts';
import type { JsonObject } from '../../lib/util/json.ts';

/** Confirmed only with nothing of the run alive; unconfirmed only with an error that says why. */
function assertHonest(full: JsonObject, alive: readonly number[]): void {
  assert.equal(full['cleanup_proof'], 'ps_scan');
  if (full['cleanup_confirmed'] === true) return void assert.deepEqual(alive, [], 'confirmed while a process of the run lives');
  assert.equal(full['cleanup_confirmed'], false);
  assert.ok(isJsonObject(full['cleanup_error']), JSON.stringify(full['cleanup_error']));
}

for (const leaves of ['bash_bg', 'bash_setsid', 'double_fork', 'new_group'] as const) {
  test(`darwin (ps_scan): what the version check leaves (${leaves}) is the run's: confirmed only when nothing lives; the proof is the file`, async () => {
    const { verdict } = await withDarwinServer({ FAKE_CLAUDE_VERSION_MODE: leaves }, async (darwin, ready) => {
      const out = await darwin.call('claude.run', { prompt: 'x', cwd: darwin.dir });
      const alive = aliveNaming(ready);
      const full = await darwin.full(out.result?.['run_id']);
      assertHonest(full, alive);
      assert.equal(full['version_proof'], 'file', 'a script on darwin: the file at best');
      assert.equal(readReadyLines(ready).filter((l) => l.ready === 'escapee').length, 1, 'the check really left a process');
    });
    assertDarwinTrace(verdict);
  });
}

test('darwin (ps_scan): a version check that leaves a process and then fails: the version error, and the run never started', async () => {
  const env = { FAKE_CLAUDE_VERSION_MODE: 'bash_setsid', FAKE_CLAUDE_VERSION: '2.1.400' };
  const { verdict } = await withDarwinServer(env, async (darwin, ready) => {
    const out = await darwin.call('claude.run', { prompt: 'x', cwd: darwin.dir });
    assert.equal(out.isError, true);
    assert.equal(errorCode(out.result), 'native_version_mismatch');
    assertHonest(await darwin.full(out.result?.['run_id']), aliveNaming(ready));
    assert.equal(readReadyLines(ready).filter((l) => l.ready === 'native').length, 0, 'the run itself never started');
  });
  assertDarwinTrace(verdict);
});

test('darwin (ps_scan): cancel during a hanging version check ends the check at once and reports cancelled', async () => {
  const { verdict } = await withDarwinServer({ FAKE_CLAUDE_VERSION_MODE: 'hang' }, async (darwin, ready) => {
    const started = await darwin.call('claude.run.start', { prompt: 'x', cwd: darwin.dir });
    const runId = String(started.result?.['run_id']);
    const check = await waitForReady(ready, 'version');
    const cancel = await darwin.call('claude.run.cancel', { run_id: runId });
    assert.equal(cancel.isError, false, cancel.text);
    const full = await darwin.full(runId);
    assert.equal(full['cancelled'], true, JSON.stringify(full['error']));
    assert.equal(errorCode(full), 'cancelled');
    await waitForGone([check], 10_000);
    assertHonest(full, aliveNaming(ready));
  });
  assertDarwinTrace(verdict);
});
