// `npm run demo` on this checkout: the fake CLI through the SDK client, all three acts, cleanup confirmed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('the demo exits 0 and prints its results and cleanup confirmation', async () => {
  // Faster words than the interactive default; the cancel act still sees the run mid-stream.
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], {
    cwd: ROOT,
    env: { ...process.env, FAKE_CLAUDE_DELAY_MS: '20' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  assert.equal(code, 0, `${stdout}\n${stderr}`);
  assert.match(
    stdout,
    /tools {4}claude\.run, claude\.run\.start, claude\.run\.list, claude\.run\.result, claude\.run\.events, claude\.run\.cancel, claude\.run\.release/,
  );
  assert.match(stdout, /\[#{30}\] +\d+ events .*done/);
  assert.equal(stdout.match(/^ {3}cleanup_confirmed: true$/gm)?.length, 3, stdout);
  assert.match(stdout, /> Hello from the bundled fake Claude Code! Three primes: 2, 3 and 5\./);
  assert.match(stdout, /ERROR cancelled:/);
  assert.match(stdout, /adapter: stdin closed, process exited after \d+ ms/);
  assert.match(stdout, /process table: 3 native process\(es\) started, 0 still running/);
  assert.doesNotMatch(stdout, /FAILED/);
});
