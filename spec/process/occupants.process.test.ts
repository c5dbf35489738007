/**
 * Whether a bare pid (a worktree lock's) lives, on the real /proc: in the initial pid namespace it is looked up;
 * in any other namespace it is unprovable, since an ancestor namespace's process (the host's Claude Code locking
 * a bind-mounted repository) is in no /proc this process can read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { INITIAL_PID_NAMESPACE, pidPresence } from '../../lib/process/occupants.ts';
import { ownPidSpace } from '../../lib/process/proc-table.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('in the initial pid namespace a live pid lives', () => {
  assert.equal(ownPidSpace()?.pidNamespace, INITIAL_PID_NAMESPACE, 'the suite runs in the initial pid namespace');
  assert.equal(pidPresence(process.pid), 'lives');
});

test('in a nested pid namespace no pid is judged, not even its own', () => {
  const probe = `
    import { pidPresence } from ${JSON.stringify(new URL('../../lib/process/occupants.ts', import.meta.url).href)};
    process.stdout.write(JSON.stringify([pidPresence(process.pid), pidPresence(999999)]));`;
  const run = spawnSync(
    'unshare',
    ['--pid', '--fork', '--mount-proc', '--kill-child', '--', process.execPath, '--import', 'tsx', '--input-type=module', '-e', probe],
    { cwd: ROOT, encoding: 'utf8' },
  );
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), ['unprovable', 'unprovable']);
});
