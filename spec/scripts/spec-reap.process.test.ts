/**
 * The reaper's session mark (scripts/spec-reap.mjs): a session is a file's only while the file's root process
 * still holds its pid, checked by identity. Once the root is reaped its pid is free, and a stranger's new
 * session may take that number: it must not be taken for the file's. Checked from a plain node process, as the
 * runner runs, against a real detached process (its own session, whose id is its pid).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { identify } from '../helpers/proc.ts';
import { arr, parseObj } from '../helpers/typed-results.ts';

const REAP = fileURLToPath(new URL('../../scripts/spec-reap.mjs', import.meta.url));

/** The pids scanOwned finds for an owner with these roots, as `owned` and as `suspects`. */
function scan(roots: readonly { pid: number; start: string }[]): { owned: number[]; suspects: number[] } {
  const script = `import { scanOwned } from ${JSON.stringify(REAP)};
const { owned, suspects } = scanOwned({ markerEquals: 'no-such-marker', roots: ${JSON.stringify(roots)}, dirs: [] });
process.stdout.write(JSON.stringify({ owned: owned.map((p) => p.pid), suspects: suspects.map((p) => p.pid) }));`;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  const result = parseObj(out.stdout, 'the scan');
  const pids = (key: string): number[] => arr(result[key], key).map(Number);
  return { owned: pids('owned'), suspects: pids('suspects') };
}

test("a root's session is its own while the root holds its pid, and a stranger's once that pid names another process", async () => {
  const leader = spawn('sleep', ['3600'], { detached: true, stdio: 'ignore' });
  try {
    const id = identify(leader.pid ?? 0);
    assert.ok(id !== null, 'the session leader did not start');
    assert.deepEqual(scan([id]).owned, [id.pid], 'the live root: its session is its own');
    // The same pid, started at another time: the root that held it was reaped, and this is a stranger's session.
    const former = { pid: id.pid, start: String(BigInt(id.start) - 1n) };
    assert.deepEqual(scan([former]), { owned: [], suspects: [] });
  } finally {
    leader.kill('SIGKILL');
  }
});
