/**
 * A server in a pid namespace without a /proc of its own (`unshare -p` without --mount-proc): /proc lists the
 * parent namespace's processes, so no pid the server or a supervisor reads there names a process of its runs.
 * It refuses to run anything, says why, and exits 1, with nothing spawned.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { INITIALIZE } from '../faults/raw-server.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('under unshare -p without its own /proc the server refuses every run (proc_foreign) and exits 1', async () => {
  const server = spawn('unshare', ['--pid', '--fork', '--kill-child', '--', process.execPath, '--import', 'tsx', 'lib/main.ts'], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  server.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  server.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // Settles on the exit, or on a tools/list answer (a server that served would never exit by itself).
  const settled = new Promise<number | null | 'answered'>((resolve) => {
    server.on('exit', (code) => resolve(code));
    server.stdout.on('data', () => {
      if (stdout.includes('"id":2,"result"')) resolve('answered');
    });
  });
  const send = (message: object): void => void server.stdin.write(`${JSON.stringify(message)}\n`);
  send(INITIALIZE(1));
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  try {
    assert.equal(await settled, 1, 'it exited 1 without offering a tool');
    assert.match(stderr, /cleanup backend is not available here \(proc_foreign\)/);
  } finally {
    server.kill('SIGKILL');
  }
});
