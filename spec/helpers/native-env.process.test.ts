import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import {
  MINIMAL_PATH,
  REPO_ROOT,
  SANDBOX_TAG_VAR,
  TRAFFIC_OFF_ENV,
  createNativeSandbox,
  pollUntilGone,
  realClaudeBin,
} from './native-env.ts';

const GONE_WITHIN_MS = 5_000;

test('the sandbox env is minimal, points at the base URL and turns traffic off', async () => {
  const sandbox = await createNativeSandbox({ baseUrl: 'http://127.0.0.1:9' });
  try {
    assert.deepEqual(
      Object.keys(sandbox.env).sort(),
      [
        'ANTHROPIC_API_KEY',
        'ANTHROPIC_BASE_URL',
        'CLAUDE_CODE_MAX_RETRIES',
        'CLAUDE_CODE_TMPDIR',
        'HOME',
        'LANG',
        'PATH',
        'TMPDIR',
        ...Object.keys(TRAFFIC_OFF_ENV),
        SANDBOX_TAG_VAR,
      ].sort(),
    );
    assert.equal(sandbox.env['PATH'], MINIMAL_PATH);
    assert.equal(sandbox.env['HOME'], sandbox.home);
    assert.equal(sandbox.env['TMPDIR'], sandbox.tmp);
    assert.equal(sandbox.env['CLAUDE_CODE_TMPDIR'], sandbox.tmp);
    assert.equal(sandbox.env['ANTHROPIC_BASE_URL'], 'http://127.0.0.1:9');
    assert.match(sandbox.env['ANTHROPIC_API_KEY'] ?? '', /^sk-ant-fake-[0-9a-f]{16}$/);
    assert.equal(sandbox.env['CLAUDE_CODE_MAX_RETRIES'], '0');
    for (const dir of [sandbox.home, sandbox.cwd, sandbox.tmp]) {
      assert.ok(dir.startsWith(`${sandbox.root}/`));
      assert.ok(statSync(dir).isDirectory());
    }
  } finally {
    await sandbox.cleanup();
  }
  assert.equal(existsSync(sandbox.root), false);
  await sandbox.cleanup();
});

test('retries, custom headers and extra env are applied in order', async () => {
  const unset = await createNativeSandbox({ baseUrl: 'http://127.0.0.1:9', maxRetries: null });
  const custom = await createNativeSandbox({
    baseUrl: 'http://127.0.0.1:9',
    maxRetries: 2,
    customHeaders: ['x-fake-scenario: text', 'x-other: 1'],
    extraEnv: { CLAUDE_CODE_MAX_RETRIES: '5', IS_SANDBOX: '1' },
  });
  try {
    assert.equal('CLAUDE_CODE_MAX_RETRIES' in unset.env, false);
    assert.equal('ANTHROPIC_CUSTOM_HEADERS' in unset.env, false);
    assert.equal(custom.env['ANTHROPIC_CUSTOM_HEADERS'], 'x-fake-scenario: text\nx-other: 1');
    assert.equal(custom.env['CLAUDE_CODE_MAX_RETRIES'], '5');
    assert.equal(custom.env['IS_SANDBOX'], '1');
    assert.notEqual(unset.root, custom.root);
  } finally {
    await unset.cleanup();
    await custom.cleanup();
  }
});

test('processes() finds a child by its env tag and by its cwd, and not after it exits', async () => {
  const sandbox = await createNativeSandbox({ baseUrl: 'http://127.0.0.1:9' });
  const keepAlive = ['-e', 'process.stdout.write("ready\\n"); setInterval(() => {}, 1000)'];
  const byEnv = spawn(process.execPath, keepAlive, { env: sandbox.env, cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
  const byCwd = spawn(process.execPath, keepAlive, { env: { PATH: MINIMAL_PATH }, cwd: sandbox.cwd, stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    await Promise.all([byEnv, byCwd].map((child) => new Promise((resolve) => child.stdout.once('data', resolve))));
    const found = await sandbox.processes();
    assert.deepEqual(found.map((p) => p.pid).sort(), [byEnv.pid, byCwd.pid].sort());
    assert.ok(found.every((p) => !p.isBinary && p.exe === process.execPath));
  } finally {
    byEnv.kill('SIGKILL');
    byCwd.kill('SIGKILL');
  }
  assert.deepEqual(await pollUntilGone(() => sandbox.processes(), GONE_WITHIN_MS), []);
  await sandbox.cleanup();
});

test('realClaudeBin is the absolute path of the pinned native file', () => {
  const bin = realClaudeBin();
  assert.ok(isAbsolute(bin));
  assert.ok(bin.startsWith(join(REPO_ROOT, 'node_modules')));
  assert.ok(statSync(bin).size > 50 * 1024 * 1024, 'the native ELF, not the npm stub');
});
