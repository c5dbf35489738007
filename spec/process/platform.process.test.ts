/**
 * The bundle started on a refused platform (the preload makes process.platform read win32, or freebsd where ps
 * does not answer as expected): every public role and the library stop at once with `platform_unsupported`, and
 * nothing is spawned on win32 (the preload turns any child_process start into a line on stderr), nothing but the
 * one `ps` elsewhere. An unknown platform whose ps answers runs the portable path.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { specBundle } from '../helpers/bundle.ts';

const PRELOAD = fileURLToPath(new URL('../../fixtures/platform-preload.cjs', import.meta.url));
const FAKE_PS = fileURLToPath(new URL('../../fixtures/fake-ps/', import.meta.url));
const REAL_PATH = process.env['PATH'] ?? '';
const DEADLINE_MS = 20_000;

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs node with the preload; stdin stays open (a server that served would wait on it) until the exit. */
function runNode(args: readonly string[], platform: string, path: string | null = null): Promise<Ran> {
  // With a PATH of its own the process may spawn (its ps probe); otherwise any spawn announces itself and fails.
  const child = spawn(process.execPath, ['--require', PRELOAD, ...args], {
    env: { PATH: path ?? REAL_PATH, PRELOAD_PLATFORM: platform, ...(path === null ? { PRELOAD_FORBID_SPAWN: '1' } : {}) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node ${args.join(' ')} did not exit within ${DEADLINE_MS} ms (stderr: ${stderr})`));
    }, DEADLINE_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code, stdout, stderr });
    });
  });
}

function assertRefused(ran: Ran, platform: string): void {
  assert.equal(ran.code, 1, ran.stderr);
  assert.equal(ran.stdout, '', 'stdout stays empty');
  assert.ok(ran.stderr.endsWith('\n') && ran.stderr.indexOf('\n') === ran.stderr.length - 1, `one line: ${ran.stderr}`);
  const line = JSON.parse(ran.stderr) as { error: { code: string; message: string; platform: string } };
  assert.equal(line.error.code, 'platform_unsupported');
  assert.equal(line.error.platform, platform);
  assert.match(line.error.message, platform === 'win32' ? /WSL2/ : /runs on Linux/);
}

/** win32 (nothing may spawn), and freebsd whose ps is missing or prints garbage (only the ps probe runs). */
const REFUSALS: readonly { readonly platform: string; readonly path: string | null; readonly ps: RegExp | null }[] = [
  { platform: 'win32', path: null, ps: null },
  { platform: 'freebsd', path: join(FAKE_PS, 'no-such-directory'), ps: /ps_not_found/ },
  { platform: 'freebsd', path: `${join(FAKE_PS, 'garbage')}:${REAL_PATH}`, ps: /ps_output_invalid/ },
];

for (const { platform, path, ps } of REFUSALS) {
  const how = ps === null ? platform : `${platform} (${ps.source})`;
  for (const args of [[], ['serve'], ['check'], ['print', '--permission-mode', 'dontAsk', '--', 'hi'], ['--version']]) {
    test(`${how}: \`${['claude-run-mcp', ...args].join(' ')}\` refuses at once, spawning ${ps === null ? 'nothing' : 'only ps'}`, async () => {
      const ran = await runNode([await specBundle(), ...args], platform, path);
      assertRefused(ran, platform);
      if (ps !== null) assert.match(ran.stderr, ps, 'the refusal names why ps does not do');
    });
  }

  test(`${how}: the library throws platform_unsupported before anything starts`, async () => {
    const script = `
      const lib = require(${JSON.stringify(await specBundle())});
      try { lib.createClaudeRunAdapter({}); console.log('created'); }
      catch (e) { console.log(JSON.stringify({ code: e.code, name: e.name, platform: e.platform, isClass: e instanceof lib.PlatformUnsupported })); }`;
    const ran = await runNode(['-e', script], platform, path);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stderr, '', 'nothing spawned');
    assert.deepEqual(JSON.parse(ran.stdout), { code: 'platform_unsupported', name: 'PlatformUnsupported', platform, isClass: true });
  });
}

test('on linux the same preload lets the bundle answer, and its spawn guard does fire', async () => {
  const version = await runNode([await specBundle(), '--version'], 'linux');
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stdout, /^claude-run-mcp \d/);
  const guarded = await runNode(['-e', "try { require('node:child_process').spawnSync('true') } catch {}"], 'win32');
  assert.equal(guarded.stderr, 'preload: child_process.spawnSync called\n');
});

test('freebsd whose ps answers as BSD ps and procps do: the portable path (ps_scan, as on macOS)', async () => {
  const version = await runNode([await specBundle(), '--version'], 'freebsd', REAL_PATH);
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stdout, /^claude-run-mcp \d/);
  const script = `
    const lib = require(${JSON.stringify(await specBundle())});
    const adapter = lib.createClaudeRunAdapter({});
    console.log(typeof adapter);`;
  const created = await runNode(['-e', script], 'freebsd', REAL_PATH);
  assert.equal(created.code, 0, created.stderr);
  assert.equal(created.stdout, 'object\n');
  const check = await runNode([await specBundle(), 'check'], 'freebsd', REAL_PATH);
  const report = JSON.parse(check.stdout) as { cleanup?: { backend?: string; platform?: string } };
  assert.equal(report.cleanup?.backend, 'ps_scan', check.stdout);
  assert.equal(report.cleanup?.platform, 'darwin');
});
