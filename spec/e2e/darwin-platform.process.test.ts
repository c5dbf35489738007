/**
 * The platform is decided once, by the server: started with the platform preload reading `darwin`, the server
 * tells every supervisor `--platform=darwin` on its command line, while the supervisor itself (no preload: it
 * is spawned without the server's node options) reads Linux as its process.platform and never looks. The
 * capabilities resource and `check` say ps_scan, platform darwin, reason platform.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serverNodeArgs } from '../helpers/bundle.ts';
import { FAKE_CLAUDE, INITIALIZE, nativeTestEnv } from '../faults/raw-server.ts';
import { cmdlineOf, killAll, supervisorsOf, waitFor } from '../faults/proc-helpers.ts';
import { parseObj } from '../helpers/typed-results.ts';
import type { ProcessIdentity } from '../../lib/supervisor/protocol.ts';

const PRELOAD = fileURLToPath(new URL('../../fixtures/platform-preload.cjs', import.meta.url));
const DEADLINE_MS = 30_000;

interface Served {
  readonly pid: number;
  send(message: unknown): void;
  response(id: string): Promise<Record<string, unknown>>;
  close(): Promise<number | null>;
  kill(): void;
}

function serveAsDarwin(dir: string): Served {
  const child = spawn(process.execPath, ['--require', PRELOAD, ...serverNodeArgs(), '--claude-bin', FAKE_CLAUDE], {
    cwd: dir,
    env: nativeTestEnv({ HOME: dir, PRELOAD_PLATFORM: 'darwin' }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages: Record<string, unknown>[] = [];
  let carry = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (carry + chunk).split('\n');
    carry = lines.pop() ?? '';
    for (const line of lines) if (line !== '') messages.push(parseObj(line, 'server stdout line'));
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    pid: child.pid ?? -1,
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    response: (id) => waitFor(`response ${id} (stderr: ${stderr.slice(-400)})`, () => messages.find((m) => m['id'] === id), DEADLINE_MS),
    close: () => {
      child.stdin.end();
      return exited;
    },
    kill: () => child.kill('SIGKILL'),
  };
}

const resultOf = (response: Record<string, unknown>): Record<string, unknown> => {
  const result = response['result'];
  assert.ok(typeof result === 'object' && result !== null, JSON.stringify(response).slice(0, 400));
  return result as Record<string, unknown>;
};

test('a server whose process.platform reads darwin tells its supervisors so; they never read it themselves', async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-darwin-')));
  const server = serveAsDarwin(dir);
  const seen: ProcessIdentity[] = [];
  try {
    server.send(INITIALIZE('init'));
    await server.response('init');
    server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    server.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
    await server.response('list');
    const [spare] = await waitFor('the spare supervisor', () => {
      const found = supervisorsOf(server.pid);
      return found.length === 1 ? found : undefined;
    });
    assert.ok(spare !== undefined);
    seen.push(spare);
    const argv = readFileSync(`/proc/${spare.pid}/cmdline`, 'latin1').split('\0').slice(0, -1);
    assert.equal(argv.at(-1), '--platform=darwin', `the decision is its last argument: ${cmdlineOf(spare.pid)}`);
    assert.ok(!argv.some((arg) => arg.includes('platform-preload')), 'the supervisor runs without the preload');
    assert.ok(!readFileSync(`/proc/${spare.pid}/environ`, 'latin1').includes('NODE_OPTIONS='), 'nor through NODE_OPTIONS');

    server.send({ jsonrpc: '2.0', id: 'caps', method: 'resources/read', params: { uri: 'claude-run://capabilities' } });
    const contents = resultOf(await server.response('caps'))['contents'] as { text: string }[];
    const caps = parseObj(contents[0]?.text ?? '', 'capabilities');
    assert.deepEqual(caps['cleanup'], {
      backend: 'ps_scan',
      platform: 'darwin',
      cgroup: null,
      kill: null,
      fallback_reason: 'platform',
      fallback_detail: 'macOS has no cgroups and no /proc: cleanup is proven by signals and the system ps',
      forced: false,
      fallback_runs: null,
    });
    // One run on the darwin path: its version check binds the fake CLI (a script) to its file, never its image.
    server.send({ jsonrpc: '2.0', id: 'run', method: 'tools/call', params: { name: 'claude.run', arguments: { prompt: 'hi' } } });
    const run = resultOf(await server.response('run'));
    const runId = (run['structuredContent'] as { result: { run_id: string } }).result.run_id;
    server.send({
      jsonrpc: '2.0',
      id: 'full',
      method: 'tools/call',
      params: { name: 'claude.run.result', arguments: { run_id: runId, detail: 'full' } },
    });
    const full = (resultOf(await server.response('full'))['structuredContent'] as { result: Record<string, unknown> }).result;
    // The portable source cannot tell another job's daemonized orphan from the run's: such a run is left
    // unconfirmed with that reason alone (never confirmed, never failed for anything else).
    if (full['cleanup_confirmed'] !== true) {
      const error = full['error'] as { code?: unknown; message?: unknown } | null;
      assert.equal(error?.code, 'cleanup_unconfirmed', JSON.stringify(error));
      assert.match(String(error?.message), /^unattributed orphan\(s\) started during the run/);
    } else assert.equal(full['is_error'], false, JSON.stringify(full['error']));
    assert.equal(full['version_proof'], 'file');
    assert.equal(await server.close(), 0);
  } finally {
    server.kill();
    killAll(seen);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('`check` on darwin names ps_scan and the platform, and forcing cgroup there exits 1 with reason platform', async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-darwin-')));
  const run = (args: readonly string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, ['--require', PRELOAD, ...serverNodeArgs(), ...args], {
        cwd: dir,
        env: nativeTestEnv({ HOME: dir, PRELOAD_PLATFORM: 'darwin' }),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.once('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(stdin);
    });
  try {
    const checked = await run(['check', '--claude-bin', FAKE_CLAUDE]);
    const report = parseObj(checked.stdout, `check output (stderr: ${checked.stderr})`);
    const cleanup = report['cleanup'] as Record<string, unknown>;
    assert.equal(cleanup['backend'], 'ps_scan');
    assert.equal(cleanup['platform'], 'darwin');
    assert.equal(cleanup['fallback_reason'], 'platform');
    // The providers (and the backend) load right after the handshake, at the first use.
    const handshake = [
      INITIALIZE('init'),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 'l', method: 'tools/list' },
    ];
    const forced = await run(
      ['--cleanup-backend', 'cgroup', '--claude-bin', FAKE_CLAUDE],
      handshake.map((m) => `${JSON.stringify(m)}\n`).join(''),
    );
    assert.equal(forced.code, 1, forced.stderr);
    assert.match(forced.stderr, /the cgroup cleanup backend is not available here \(platform\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
