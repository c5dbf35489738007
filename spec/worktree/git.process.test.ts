// The bounded git runner on real processes: a call past its time bound or its output bound is killed with
// SIGKILL and reported as data, and no process it started is left in the process table afterwards.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGitRunner, createGitRunnerSync, MAX_NEUTRALIZED_FILTERS } from '../../lib/worktree/git.ts';
import { readProcTable } from '../../lib/process/proc-table.ts';

const cmdline = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').slice(0, -1).join(' ');
  } catch {
    return '';
  }
};

/** Children of this test process, other than those it had before (tsx's esbuild service). */
const BEFORE = new Set(
  readProcTable()
    .filter((p) => p.ppid === process.pid)
    .map((p) => p.pid),
);
const children = (): number[] =>
  readProcTable()
    .filter((p) => p.ppid === process.pid && !BEFORE.has(p.pid))
    .map((p) => p.pid);

describe('bounded git runner', () => {
  it('a call past its time bound is killed and reported as git_timeout, nothing left running', async () => {
    const run = createGitRunner({ bin: '/bin/sleep', env: { PATH: '/usr/bin:/bin' }, timeoutMs: 200 });
    const started = Date.now();
    const out = await run(['30'], tmpdir());
    assert.equal(out.ok, false);
    assert.equal(out.ok ? null : out.code, 'git_timeout');
    assert.ok(Date.now() - started < 10_000, 'it did not wait for the command');
    assert.deepEqual(children(), [], 'the killed child was reaped before the call returned');
  });

  it('at its time bound the whole process group is killed, not only git (a helper git started goes too)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'git-runner-'));
    const unique = String(400_000 + Math.floor(Math.random() * 500_000));
    const helpers = (): number[] =>
      readProcTable()
        .filter((p) => p.state !== 'Z' && cmdline(p.pid) === `sleep ${unique}`)
        .map((p) => p.pid);
    try {
      const script = join(dir, 'slow');
      writeFileSync(script, `#!/bin/sh\nsleep ${unique} </dev/null >/dev/null 2>&1 &\nwait\n`);
      chmodSync(script, 0o755);
      const out = await createGitRunner({ bin: script, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 500 })(['rev-parse'], dir);
      assert.equal(out.ok ? 'ok' : out.code, 'git_timeout');
      const started = Date.now();
      while (helpers().length > 0 && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(helpers(), [], 'the helper outlived the call');
    } finally {
      for (const pid of helpers()) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('output past its bound is git_output_too_large; at the bound it is whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'git-runner-'));
    try {
      const script = join(dir, 'print');
      writeFileSync(script, '#!/bin/sh\nhead -c "$1" /dev/zero\n');
      chmodSync(script, 0o755);
      const run = createGitRunner({ bin: script, env: { PATH: '/usr/bin:/bin' }, maxOutputBytes: 1024 });
      const at = await run(['1024'], dir);
      assert.equal(at.ok ? at.stdout.length : -1, 1024);
      const over = await run(['1025'], dir);
      assert.equal(over.ok ? 'ok' : over.code, 'git_output_too_large');
      const sync = createGitRunnerSync({ bin: script, env: { PATH: '/usr/bin:/bin' }, maxOutputBytes: 1024 });
      assert.equal(sync(['1024'], dir).ok, true);
      const syncOver = sync(['1025'], dir);
      assert.equal(syncOver.ok ? 'ok' : syncOver.code, 'git_output_too_large');
      assert.deepEqual(children(), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(`up to ${MAX_NEUTRALIZED_FILTERS} configured filter drivers are turned off; one more and a content-reading call is refused`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'git-runner-'));
    try {
      execFileSync('git', ['init', '-q'], { cwd: dir });
      const drivers = (from: number, to: number): string =>
        Array.from({ length: to - from }, (_, i) => `[filter "f${from + i}"]\n\tclean = false\n`).join('');
      appendFileSync(join(dir, '.git/config'), drivers(0, MAX_NEUTRALIZED_FILTERS));
      writeFileSync(join(dir, '.gitattributes'), '* filter=f0\n');
      const run = createGitRunner({ env: { PATH: '/usr/bin:/bin' } });
      const at = await run(['status', '--porcelain'], dir);
      assert.deepEqual(at.ok ? 'ok' : at, 'ok');
      appendFileSync(join(dir, '.git/config'), drivers(MAX_NEUTRALIZED_FILTERS, MAX_NEUTRALIZED_FILTERS + 1));
      const over = await run(['status', '--porcelain'], dir);
      assert.equal(over.ok ? 'ok' : over.code, 'git_too_many_filters');
      assert.equal((await run(['rev-parse', '--git-dir'], dir)).ok, true, 'a call that reads no content is still made');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a missing binary is git_not_found; a failing command keeps its exit code', async () => {
    const missing = await createGitRunner({ bin: '/nonexistent/git', env: {} })(['--version'], tmpdir());
    assert.equal(missing.ok ? 'ok' : missing.code, 'git_not_found');
    const failing = await createGitRunner({ env: { PATH: '/usr/bin:/bin' } })(['rev-parse', '--show-toplevel'], '/');
    assert.deepEqual(failing.ok ? 'ok' : [failing.code, failing.exitCode], ['git_exit_nonzero', 128]);
    const failingSync = createGitRunnerSync({ env: { PATH: '/usr/bin:/bin' } })(['rev-parse', '--show-toplevel'], '/');
    assert.deepEqual(failingSync.ok ? 'ok' : [failingSync.code, failingSync.exitCode], ['git_exit_nonzero', 128]);
  });
});
