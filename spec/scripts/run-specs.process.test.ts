/**
 * The spec runner's own promise: nothing a spec file starts survives the file, whatever ends it. A nested
 * runner gets one fixture file that leaves a chain no /proc mark can follow (new session every 50 ms, cleared
 * environment, cwd `/`) and never ends; the nested runner is stopped by SIGINT once the chain lives, as
 * Ctrl-C would (a file's deadline takes the same reaping path). With a cgroup per file the chain is ended
 * for certain: once the runner has exited, no generation of it holds its lock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../helpers/proc.ts';

/** flock(1) exits with this when the lock is held. */
const LOCKED_STATUS = 75;
const RUNNER_EXIT_DEADLINE_MS = 60_000;

const chainAlive = (readyFile: string): boolean =>
  spawnSync('flock', ['-n', '-E', String(LOCKED_STATUS), `${readyFile}.lock`, 'true']).status === LOCKED_STATUS;

test('a stopped run ends what its file left, even a chain that re-spawns into new sessions with a cleared environment', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'runner-spec-'));
  const readyFile = join(dir, 'ready.jsonl');
  const runner = spawn(process.execPath, ['scripts/run-specs.mjs', '--spec-dir', 'fixtures/runner'], {
    env: { ...process.env, RUNNER_SPEC_READY_FILE: readyFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  runner.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  runner.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => runner.on('exit', (code) => resolve(code)));
  try {
    await waitFor('the chain the fixture file starts', () => chainAlive(readyFile));
    runner.kill('SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      exited,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the runner did not exit: ${out}`)), RUNNER_EXIT_DEADLINE_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    assert.equal(code, 130, out);
    assert.match(out, /killed: the run was stopped by SIGINT/);
    assert.match(out, /^chain-started$/m, "the file's own output is kept");
    // The kernel's word, not a scan's: a cgroup per file held every generation, and the runner measured it.
    assert.match(out, /# cpu: [\d.]+ s in 1 of 1 files/, out);
    assert.equal(chainAlive(readyFile), false, 'a generation of the chain outlived the runner');
  } finally {
    writeFileSync(`${readyFile}.stop`, '');
    runner.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
