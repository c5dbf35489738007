/**
 * The version check is a supervised step of the run: what it leaves behind is ended and accounted for, a
 * cancel or a shutdown during a hanging check ends it at once, and kill -9 of the adapter during the check
 * leaves nothing running.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS } from '../helpers/backends.ts';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_CLAUDE } from '../helpers/tool-harness.ts';
import { readProcStat, readReadyLines, waitForGone, waitForReady } from '../helpers/proc.ts';
import { MAIN, ROOT } from '../e2e/server-process.ts';
import { aliveNaming, errorCode, killPids, withTracedHarness } from './escape-helpers.ts';
import { at } from '../helpers/typed-results.ts';

for (const leaves of ['bash_bg', 'bash_setsid', 'double_fork', 'new_group'] as const) {
  test(`what the version check leaves (${leaves}) is ended with the run, and the run proves it`, async () => {
    await withTracedHarness('crm-version-', { FAKE_CLAUDE_VERSION_MODE: leaves }, async (h, ready) => {
      const out = await h.call('claude.run', { prompt: 'x', cwd: h.dir });
      assert.deepEqual(aliveNaming(ready), []);
      assert.equal(out.isError, false, out.text.slice(0, 400));
      assert.equal(out.result?.['cleanup_confirmed'], true);
      assert.equal(readReadyLines(ready).filter((l) => l.ready === 'escapee').length, 1, 'the check really left a process');
    });
  });
}

test('a version check that leaves a process and then fails: the run reports the version error and still ends the leftover', async () => {
  await withTracedHarness('crm-version-', { FAKE_CLAUDE_VERSION_MODE: 'bash_setsid', FAKE_CLAUDE_VERSION: '2.1.400' }, async (h, ready) => {
    const out = await h.call('claude.run', { prompt: 'x', cwd: h.dir });
    assert.deepEqual(aliveNaming(ready), []);
    assert.equal(out.isError, true);
    assert.equal(errorCode(out.result), 'native_version_mismatch');
    assert.equal(out.result?.['cleanup_confirmed'], true);
    assert.equal(readReadyLines(ready).filter((l) => l.ready === 'native').length, 0, 'the run itself never started');
  });
});

// A check that would take ten minutes to time out: only an immediate end lets these tests finish.
const HANGING_CHECK = { versionTimeoutMs: 600_000 };

test('cancel during a hanging version check ends the check at once and reports cancelled', async () => {
  await withTracedHarness(
    'crm-version-',
    { FAKE_CLAUDE_VERSION_MODE: 'hang' },
    async (h, ready) => {
      const started = await h.call('claude.run.start', { prompt: 'x', cwd: h.dir });
      const runId = String(started.result?.['run_id']);
      const check = await waitForReady(ready, 'version');
      const cancel = await h.call('claude.run.cancel', { run_id: runId });
      assert.equal(cancel.isError, false, cancel.text);
      const { result } = await h.settled(runId, { waitSeconds: 5 });
      assert.equal((await h.full(runId))['cancelled'], true, JSON.stringify(result));
      assert.equal(errorCode(result), 'cancelled');
      assert.equal(result['cleanup_confirmed'], true);
      await waitForGone([check], 1000);
    },
    HANGING_CHECK,
  );
});

test('closing the server during a hanging version check does not wait for the check', async () => {
  await withTracedHarness(
    'crm-version-',
    { FAKE_CLAUDE_VERSION_MODE: 'hang' },
    async (h, ready) => {
      const pending = h.call('claude.run', { prompt: 'x', cwd: h.dir });
      const check = await waitForReady(ready, 'version');
      await h.providers.close();
      const out = await pending;
      assert.equal((await h.full(out.result?.['run_id']))['cancelled'], true);
      assert.equal(errorCode(out.result), 'cancelled');
      assert.equal(out.result?.['cleanup_confirmed'], true);
      await waitForGone([check], 1000);
    },
    HANGING_CHECK,
  );
});

test('kill -9 of the server during a hanging version check leaves nothing running', async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'crm-version-'));
  const ready = join(scratch, 'ready.jsonl');
  const server = spawn(process.execPath, [...MAIN, '--claude-bin', FAKE_CLAUDE], {
    cwd: ROOT,
    stdio: ['pipe', 'ignore', 'ignore'],
    env: { ...process.env, FAKE_CLAUDE_VERSION_MODE: 'hang', FAKE_CLAUDE_READY_FILE: ready },
  });
  const send = (message: unknown): void => {
    server.stdin.write(`${JSON.stringify(message)}\n`);
  };
  try {
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '0' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'claude.run.start', arguments: { prompt: 'x', cwd: scratch } } });
    const check = await waitForReady(ready, 'version', 60_000);
    server.kill('SIGKILL');
    await waitForGone([check], 10_000);
    assert.deepEqual(aliveNaming(ready), []);
  } finally {
    server.kill('SIGKILL');
    killPids(aliveNaming(ready));
    rmSync(scratch, { recursive: true, force: true });
  }
});

test('a supervisor that cannot start: spawn_failed, nothing started, cleanup confirmed, the slot free again', async () => {
  await withTracedHarness(
    'crm-version-',
    {},
    async (h) => {
      const out = await h.call('claude.run', { prompt: 'x', cwd: h.dir });
      assert.equal(errorCode(out.result), 'spawn_failed', out.text.slice(0, 300));
      assert.equal(out.result?.['cleanup_confirmed'], true);
      const released = await h.call('claude.run.release', { run_id: String(out.result?.['run_id']) });
      assert.equal(released.isError, false, released.text);
    },
    { supervision: { supervisorCommand: { file: '/nonexistent/node', args: [] } } },
  );
});

for (const backend of BACKENDS)
  test(`${backend.name}: a supervisor that stops answering during the version check: the probe and the dispose are both bounded, the run settles ${backend.name === 'cgroup' ? 'proven by the cgroup' : 'unconfirmed'}`, async () => {
    await withTracedHarness(
      'crm-version-',
      { FAKE_CLAUDE_VERSION_MODE: 'hang' },
      async (h, ready) => {
        const pending = h.call('claude.run', { prompt: 'x', cwd: h.dir });
        const check = await waitForReady(ready, 'version');
        const supervisorPid = readProcStat(check.pid)?.ppid ?? 0;
        assert.ok(supervisorPid > 1);
        process.kill(supervisorPid, 'SIGSTOP');
        const out = await pending;
        assert.equal(errorCode(out.result), 'native_version_timeout', out.text.slice(0, 300));
        if (backend.name === 'cgroup') {
          // The check was born in the run's cgroup: the adapter ends it there and the kernel proves it.
          assert.equal(out.result?.['cleanup_confirmed'], true, JSON.stringify(out.result?.['cleanup_error']));
        } else {
          assert.equal(out.result?.['cleanup_confirmed'], false);
          assert.equal(at(out.result, 'cleanup_error', 'code'), 'supervisor_failed');
        }
        await waitForGone([check], 10_000);
        // The bound must outlast the fake's own start on a busy machine (a node start takes ~1 s at load 30), or the
        // check is timed out before it can say it is ready and the spec waits for a line that never comes.
      },
      { versionTimeoutMs: 3000, cleanupBackend: backend.option },
    );
  });
