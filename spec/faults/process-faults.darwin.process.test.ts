/**
 * Process faults as on a Mac (spec/helpers/darwin-server.ts), the cases of process-faults.process.test.ts that a
 * server process can show: a native that ignores SIGTERM, a grandchild holding the native's pipes, a setsid
 * child, and kill -9 of the native. Under ps_scan the run is confirmed only when none of its processes lives,
 * and no server or supervisor process touches /proc, /sys or a cgroup.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertDarwinTrace, withDarwinServer } from '../helpers/darwin-server.ts';
import { isRunning, killIfRunning, readReadyLines, waitForReady } from '../helpers/proc.ts';
import { isJsonObject } from '../helpers/typed-results.ts';
import type { ProcessIdentity } from '../../lib/supervisor/protocol.ts';
import type { JsonObject } from '../../lib/util/json.ts';

/** Confirmed only when none of `ids` runs; else unconfirmed with an error that says why. */
function assertHonest(full: JsonObject, ids: readonly ProcessIdentity[]): void {
  assert.equal(full['cleanup_proof'], 'ps_scan');
  const alive = ids.filter(isRunning).map((id) => id.pid);
  if (full['cleanup_confirmed'] === true) return void assert.deepEqual(alive, [], 'confirmed while a process of the run lives');
  assert.equal(full['cleanup_confirmed'], false);
  assert.ok(isJsonObject(full['cleanup_error']), JSON.stringify(full['cleanup_error']));
}

const LADDER_CASES: readonly { name: string; env: Record<string, string>; ready: string; cancel: boolean }[] = [
  {
    name: 'a native that ignores SIGINT and SIGTERM is SIGKILLed on cancel',
    // It ignores the in-band interrupt too, so the ladder's SIGKILL is what ends it.
    env: { FAKE_CLAUDE_SCENARIO: 'ignore_sigterm', FAKE_CLAUDE_IGNORE_INTERRUPT: '1' },
    ready: 'handlers',
    cancel: true,
  },
  {
    name: 'a grandchild holding the native pipes is ended after a normal exit',
    env: { FAKE_CLAUDE_SCENARIO: 'grandchild_holds_stdout' },
    ready: 'grandchild',
    cancel: false,
  },
  {
    name: 'a setsid child (own session) is ended on cancel',
    env: { FAKE_CLAUDE_SCENARIO: 'setsid_child', FAKE_CLAUDE_HOLD_MS: 'hang' },
    ready: 'setsid',
    cancel: true,
  },
];

for (const c of LADDER_CASES) {
  test(`darwin (ps_scan): ${c.name}`, async () => {
    const ids: ProcessIdentity[] = [];
    try {
      const { verdict } = await withDarwinServer(c.env, async (darwin, ready) => {
        const started = await darwin.call('claude.run.start', { prompt: 'x', cwd: darwin.dir });
        const runId = String(started.result?.['run_id']);
        ids.push(await waitForReady(ready, 'native'));
        const line = await waitForReady(ready, c.ready);
        ids.push(line);
        if (c.cancel) await darwin.call('claude.run.cancel', { run_id: runId });
        const full = await darwin.full(runId);
        assert.equal(full['completed'], true);
        assert.equal(full['cancelled'], c.cancel);
        assertHonest(full, ids);
        assert.ok(readReadyLines(ready).length >= 2);
      });
      assertDarwinTrace(verdict);
    } finally {
      killIfRunning(ids);
    }
  });
}

test('darwin (ps_scan): kill -9 of the native: an error naming the signal, the run honest, the server serving on', async () => {
  const env = { FAKE_CLAUDE_SCENARIO: 'slow', FAKE_CLAUDE_SLOW_EVENTS: '60', FAKE_CLAUDE_DELAY_MS: '40' };
  const { verdict } = await withDarwinServer(env, async (darwin, ready) => {
    const started = await darwin.call('claude.run.start', { prompt: 'x', cwd: darwin.dir });
    const runId = String(started.result?.['run_id']);
    const native = await waitForReady(ready, 'native');
    process.kill(native.pid, 'SIGKILL');
    const full = await darwin.full(runId);
    assert.equal(full['is_error'], true);
    assert.equal(full['signal'], 'SIGKILL');
    assertHonest(full, [native]);
    const again = await darwin.call('claude.run', { prompt: '[fake:ok] again', cwd: darwin.dir });
    assert.equal(again.result?.['state'], 'completed', again.text.slice(0, 300));
    assert.equal(isRunning(native), false, 'the killed native is gone');
  });
  assertDarwinTrace(verdict);
});
