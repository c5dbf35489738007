// How Claude Code ends a stdio server: SIGINT (stdin left open), SIGTERM ~100 ms later, then a kill
// (as captured from Claude Code 2.1.332). The server must be gone before that, yet every run it owns must
// still end: the supervisors carry on after the server, told to terminate and seeing their pipe close.
// The natives here ignore SIGINT and SIGTERM, so they certainly outlive the server and need the whole
// ladder (SIGKILL) from supervisors whose adapter is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProcessIdentity } from '../../lib/supervisor/protocol.ts';
import { MAX_ACTIVE_RUNS } from '../../lib/runs/registry.ts';
import { INITIALIZE, startRawServer } from '../faults/raw-server.ts';
import { identify, killAll, supervisorsOf, waitFor, waitForNoOrphans } from '../faults/proc-helpers.ts';
import { readReadyLines } from '../helpers/proc.ts';
import { rpcResult } from '../helpers/typed-results.ts';

/**
 * Far above the ~45 ms a signal shutdown takes on a quiet machine, and below the 4.5 s one ladder takes, so a
 * server that waited for any run fails; the proof that it did not wait is the ordering asserted below.
 */
const SIGNAL_EXIT_BOUND_MS = 4000;

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`${signal} with ${MAX_ACTIVE_RUNS} active runs: the server exits at once, every native process still ends`, async (t) => {
    const readyDir = mkdtempSync(join(tmpdir(), 'crm-signal-'));
    const readyFile = join(readyDir, 'ready.jsonl');
    const server = startRawServer({ env: { FAKE_CLAUDE_SCENARIO: 'ignore_sigterm', FAKE_CLAUDE_READY_FILE: readyFile } });
    const victims: ProcessIdentity[] = [];
    try {
      server.send(INITIALIZE('init'));
      await server.response('init');
      server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      for (let i = 0; i < MAX_ACTIVE_RUNS; i++) {
        server.send({
          jsonrpc: '2.0',
          id: `start${i}`,
          method: 'tools/call',
          params: { name: 'claude.run.start', arguments: { prompt: `run ${i}` } },
        });
        const started = await server.response(`start${i}`);
        assert.equal(rpcResult(started)['isError'], false, JSON.stringify(started));
      }
      const natives = await waitFor('every native with its signal handlers in place', () => {
        const lines = readReadyLines(readyFile).filter((l) => l.ready === 'handlers');
        return lines.length === MAX_ACTIVE_RUNS ? lines.map((l) => identify(l.pid)) : undefined;
      });
      const supervisors = supervisorsOf(server.pid);
      assert.equal(supervisors.length, MAX_ACTIVE_RUNS);
      victims.push(...supervisors, ...natives.filter((n): n is ProcessIdentity => n !== null));
      assert.equal(victims.length, 2 * MAX_ACTIVE_RUNS);

      const signalled = performance.now();
      server.child.kill(signal);
      const exit = await new Promise<{ code: number | null }>((resolve) => server.child.once('exit', (code) => resolve({ code })));
      const exitMs = performance.now() - signalled;
      t.diagnostic(`${signal} to exit with ${MAX_ACTIVE_RUNS} active runs: ${exitMs.toFixed(1)} ms`);
      assert.equal(exit.code, 0);
      assert.ok(exitMs < SIGNAL_EXIT_BOUND_MS, `took ${exitMs} ms`);
      // It did not wait for any run's cleanup: the exit bound above shows it. (A native may already have ended
      // in-band meanwhile: the shutdown's cancel asks each turn's own interrupt first, which these natives
      // obey at once; SIGINT and SIGTERM they ignore.)
      // 'exit' can come before the last of stderr is read: wait for the line (the helper's deadline bounds it).
      await server.waitUntil('the closing line on stderr', () => server.stderr().includes(`${signal}: closing`));
      // Yet everything ends: the supervisors escalate to SIGKILL on their own, then exit.
      await waitForNoOrphans(
        victims,
        supervisors.map((s) => s.pid),
        15_000,
      );
    } finally {
      killAll(victims);
      server.kill();
      rmSync(readyDir, { recursive: true, force: true });
    }
  });
}
