/** kill -9 of the adapter mid-run: the supervisor sees EOF on its control pipe and ends the whole run. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProcessIdentity } from '../../../lib/supervisor/protocol.ts';
import { identify, killIfRunning, sessionMembers, waitFor, waitForGone, waitForReady } from '../../helpers/proc.ts';
import { num, parseObj } from '../../helpers/typed-results.ts';

const PARENT = fileURLToPath(new URL('../../../fixtures/supervisor-parent.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

// [scenario, readiness line of the process that must die too]; default ladder timings throughout.
const CASES: readonly [string, string][] = [
  ['setsid_child', 'setsid'],
  ['ignore_sigterm', 'handlers'],
  ['slow', 'streaming'],
];

for (const [scenario, readiness] of CASES) {
  test(`adapter SIGKILL during ${scenario}: every process of the run is gone within 5 s`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'sup-adapter-'));
    const readyFile = join(dir, 'ready');
    const parent = spawn(process.execPath, ['--import', 'tsx', PARENT, scenario, readyFile], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    parent.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const parentClosed = new Promise((resolve) => {
      parent.on('close', resolve);
    });
    const victims: (ProcessIdentity | null)[] = [];
    try {
      const line = await waitFor('parent readiness', () => out.split('\n').find((l) => l.includes('supervisorPid')));
      const supervisor = identify(num(parseObj(line, "the parent's readiness line")['supervisorPid'], 'supervisorPid'));
      assert.ok(supervisor);
      const native = await waitForReady(readyFile, 'native');
      const extra = await waitForReady(readyFile, readiness);
      victims.push(supervisor, native, extra);
      parent.kill('SIGKILL');
      await parentClosed;
      const killedAt = performance.now();
      await waitForGone([supervisor, native, extra], 5000);
      assert.deepEqual(sessionMembers(supervisor.pid), []);
      t.diagnostic(`gone ${Math.round(performance.now() - killedAt)} ms after the adapter died`);
    } finally {
      killIfRunning(victims);
      parent.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
