import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertNativeVersion, MAX_VERSION_STDOUT_BYTES, parseNativeVersion } from '../../lib/native/version.ts';
import { checkVersionSupervised, queryOnce, withProbes } from '../helpers/probe.ts';
import { MAX_PROBES, PROBE_STDOUT_MAX_BYTES } from '../../lib/supervisor/protocol.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import { isToolError } from '../../lib/tool-errors.ts';
import type { ToolErrorCode } from '../../lib/tool-errors.ts';
import { pollUntil } from '../helpers/poll.ts';
import { environHas, readProcTable } from '../../lib/process/proc-table.ts';

const FAKE = fileURLToPath(new URL('../../fixtures/fake-version/fake-claude-version.mjs', import.meta.url));
const REAL = fileURLToPath(new URL('../../node_modules/.bin/claude', import.meta.url));

describe('parseNativeVersion', () => {
  const table: readonly [string, string | null][] = [
    ['2.1.332 (Claude Code)', '2.1.332'],
    ['2.1.332 (Claude Code)\n', '2.1.332'],
    ['  2.1.197 (Claude Code)\r\n', '2.1.197'],
    ['10.20.30 (Claude Code)', '10.20.30'],
    ['2.1.332', null],
    ['2.1.332 (claude code)', null],
    ['v2.1.332 (Claude Code)', null],
    ['2.1 (Claude Code)', null],
    ['2.1.332-beta.1 (Claude Code)', null],
    ['Claude Code 2.1.332', null],
    ['warning: something\n2.1.332 (Claude Code)', null],
    ['2.1.332 (Claude Code)\nextra', null],
    ['', null],
  ];
  for (const [stdout, expected] of table) it(JSON.stringify(stdout), () => assert.equal(parseNativeVersion(stdout, CLI_TREE), expected));
});

async function rejectsWith(promise: Promise<unknown>, code: ToolErrorCode, message: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isToolError(error), String(error));
    assert.equal(error.code, code);
    assert.match(error.message, message);
    assert.doesNotMatch(error.message, /auth|logged|login|ready/i);
    return true;
  });
}

/** True once pid is gone or a zombie nobody reaps (a container init may not); polled with a hard deadline. */
async function waitUntilGone(pid: number, deadlineMs: number): Promise<boolean> {
  return pollUntil(
    `pid ${pid} gone`,
    () => {
      let state: string;
      try {
        state = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] ?? '';
      } catch {
        return true;
      }
      return state === 'Z';
    },
    { timeoutMs: deadlineMs },
  ).catch(() => false);
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ESRCH') return false;
    throw error;
  }
}

async function waitForPidFile(path: string, deadlineMs: number): Promise<number> {
  return pollUntil(
    `a pid in ${path}`,
    () => {
      try {
        const pid = Number(readFileSync(path, 'utf8'));
        return pid > 0 ? pid : undefined;
      } catch {
        return undefined; // not written yet
      }
    },
    { timeoutMs: deadlineMs },
  );
}

describe('assertNativeVersion with fake binaries', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fake-version-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const env = (vars: Record<string, string>): Record<string, string> => ({ PATH: process.env['PATH'] ?? '', ...vars });

  it('accepts the tested version', async () => {
    assert.deepEqual(await checkVersionSupervised(FAKE, 10_000, env({})), { version: '2.1.332' });
  });

  it('mismatch names both versions', async () => {
    await rejectsWith(
      checkVersionSupervised(FAKE, 10_000, env({ FAKE_VERSION_TEXT: '2.1.400 (Claude Code)\n' })),
      'native_version_mismatch',
      /2\.1\.400.*2\.1\.332/,
    );
  });

  it('an older version is a mismatch too', async () => {
    await rejectsWith(
      checkVersionSupervised(FAKE, 10_000, env({ FAKE_VERSION_TEXT: '2.1.197 (Claude Code)' })),
      'native_version_mismatch',
      /2\.1\.197/,
    );
  });

  it('garbage is unreadable', async () => {
    await rejectsWith(
      checkVersionSupervised(FAKE, 10_000, env({ FAKE_VERSION_TEXT: 'claude: unknown build\n' })),
      'native_version_unreadable',
      /not a Claude Code version/,
    );
  });

  it(`stdout of exactly ${MAX_VERSION_STDOUT_BYTES} bytes is read`, async () => {
    const line = '2.1.332 (Claude Code)';
    const text = line + ' '.repeat(MAX_VERSION_STDOUT_BYTES - line.length);
    assert.deepEqual(await checkVersionSupervised(FAKE, 10_000, env({ FAKE_VERSION_TEXT: text })), { version: '2.1.332' });
  });

  it('one byte more is unreadable (bounded capture)', async () => {
    const line = '2.1.332 (Claude Code)';
    const text = line + ' '.repeat(MAX_VERSION_STDOUT_BYTES + 1 - line.length);
    await rejectsWith(
      checkVersionSupervised(FAKE, 10_000, env({ FAKE_VERSION_TEXT: text })),
      'native_version_unreadable',
      /more than 4096 bytes/,
    );
  });

  it('non-zero exit is failed, with the first stderr line', async () => {
    await rejectsWith(
      checkVersionSupervised(FAKE, 10_000, env({ FAKE_VERSION_MODE: 'fail' })),
      'native_version_failed',
      /exited with code 3: boom: cannot start$/,
    );
  });

  it('death by signal is failed', async () => {
    await rejectsWith(
      checkVersionSupervised(FAKE, 10_000, env({ FAKE_VERSION_MODE: 'signal' })),
      'native_version_failed',
      /killed by SIGTERM/,
    );
  });

  it('a missing binary is failed (spawn error)', async () => {
    await rejectsWith(checkVersionSupervised(join(dir, 'nope'), 10_000), 'native_version_failed', /ENOENT/);
  });

  it('a hanging binary is SIGKILLed at its timeout by the supervisor, and nothing of it remains', async () => {
    const pidFile = join(dir, 'hang.pid');
    const probed = await withProbes(FAKE, env({ FAKE_VERSION_MODE: 'hang', FAKE_VERSION_PID_FILE: pidFile }), async (query) => {
      await rejectsWith(
        assertNativeVersion({ bin: FAKE, tree: CLI_TREE, timeoutMs: 300, query }),
        'native_version_timeout',
        /within 300 ms/,
      );
    });
    // On a busy machine the timeout may come before the fake got as far as writing its pid: then nothing of
    // it may be alive either, found by its unique environment.
    if (existsSync(pidFile)) assert.equal(processExists(Number(readFileSync(pidFile, 'utf8'))), false);
    assert.deepEqual(
      readProcTable()
        .filter((p) => environHas(p.pid, 'FAKE_VERSION_PID_FILE', pidFile) === true)
        .map((p) => p.pid),
      [],
    );
    assert.equal(probed.outcome.cleanup?.confirmed, true);
  });

  for (const mode of ['orphan', 'leave-group', 'leave-setsid', 'leave-daemon'] as const) {
    it(`what a version check leaves behind (${mode}) is ended by the run's cleanup, proven gone`, async () => {
      const pidFile = join(dir, `${mode}.pid`);
      const probed = await withProbes(FAKE, env({ FAKE_VERSION_MODE: mode, FAKE_VERSION_PID_FILE: pidFile }), async (query) => {
        const answer = await assertNativeVersion({ bin: FAKE, tree: CLI_TREE, timeoutMs: 10_000, query });
        const leftover = await waitForPidFile(pidFile, 10_000);
        assert.equal(processExists(leftover), true, 'the leftover is alive while the run goes on');
        return { answer, leftover };
      });
      assert.deepEqual(probed.value.answer, { version: '2.1.332' });
      assert.equal(await waitUntilGone(probed.value.leftover, 5000), true);
      assert.equal(probed.outcome.cleanup?.confirmed, true, JSON.stringify(probed.outcome.cleanup));
    });
  }
});

describe('the real pinned binary', () => {
  let home = '';
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'claude-home-'));
  });
  after(() => rmSync(home, { recursive: true, force: true }));
  const realEnv = (): Record<string, string> => ({
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
  });

  it(`passes the version assertion (${CLI_TREE.native.tested_version})`, async () => {
    assert.deepEqual(await checkVersionSupervised(REAL, 30_000, realEnv()), { version: CLI_TREE.native.tested_version });
  });

  it('prints exactly the documented --version line', async () => {
    const result = await queryOnce(REAL, ['--version'], realEnv(), 30_000, 4096);
    assert.equal(result.kind, 'exited');
    assert.ok(result.kind === 'exited');
    assert.equal(result.stdout, `${CLI_TREE.native.tested_version} (Claude Code)\n`);
    assert.equal(result.code, 0);
  });
});

describe('probe bounds', () => {
  it(`a supervisor runs at most ${MAX_PROBES} probes; the next is refused and nothing more is started`, async () => {
    const probed = await withProbes(FAKE, { PATH: process.env['PATH'] ?? '' }, async (query) => {
      const outcomes = [];
      for (let i = 0; i <= MAX_PROBES; i++) outcomes.push(await query({ args: ['--version'], timeoutMs: 10_000, maxStdoutBytes: 4096 }));
      return outcomes;
    });
    assert.deepEqual(
      probed.value.slice(0, MAX_PROBES).map((o) => o.kind),
      Array(MAX_PROBES).fill('exited'),
    );
    assert.deepEqual(probed.value[MAX_PROBES], { kind: 'spawn_error', message: `at most ${MAX_PROBES} probes per run` });
    assert.equal(probed.outcome.cleanup?.confirmed, true);
  });

  it(`probe stdout is kept up to ${PROBE_STDOUT_MAX_BYTES} bytes whatever the caller asks, then reported as overflow`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fake-help-'));
    try {
      const file = join(dir, 'help.txt');
      writeFileSync(file, 'h'.repeat(PROBE_STDOUT_MAX_BYTES + 1));
      const env = { PATH: process.env['PATH'] ?? '', FAKE_VERSION_MODE: 'help', FAKE_HELP_FILE: file };
      const over = await queryOnce(FAKE, ['--help'], env, 10_000, PROBE_STDOUT_MAX_BYTES * 2);
      assert.ok(over.kind === 'exited');
      assert.equal(over.stdout.length, PROBE_STDOUT_MAX_BYTES);
      assert.equal(over.stdoutOverflow, true);
      writeFileSync(file, 'h'.repeat(PROBE_STDOUT_MAX_BYTES));
      const exact = await queryOnce(FAKE, ['--help'], env, 10_000, PROBE_STDOUT_MAX_BYTES);
      assert.ok(exact.kind === 'exited');
      assert.equal(exact.stdout.length, PROBE_STDOUT_MAX_BYTES);
      assert.equal(exact.stdoutOverflow, false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
