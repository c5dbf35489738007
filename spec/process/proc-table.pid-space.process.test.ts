/**
 * This process's pid space as /proc shows it, in the spec's namespace and in new ones: with a /proc of its own
 * (`unshare -p --mount-proc`) another namespace; without (`unshare -p` alone, /proc still the parent's) none at
 * all, since no pid read there names what this process's pids name.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ownPidSpace, readProcStat, selfOwner } from '../../lib/process/proc-table.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PROBE = `
  import { ownPidSpace } from ${JSON.stringify(new URL('../../lib/process/proc-table.ts', import.meta.url).href)};
  process.stdout.write(JSON.stringify(ownPidSpace()));`;

/** ownPidSpace() as a node started under `unshare` with `flags` sees it. */
function spaceUnder(flags: readonly string[]): unknown {
  const run = spawnSync(
    'unshare',
    [...flags, '--kill-child', '--', process.execPath, '--import', 'tsx', '--input-type=module', '-e', PROBE],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  );
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout);
}

test("this process's pid space: the namespace inode of /proc/self/ns/pid and the boot id's first 16 hex digits", () => {
  const space = ownPidSpace();
  assert.deepEqual(space, {
    pidNamespace: /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1],
    boot: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().replaceAll('-', '').slice(0, 16),
  });
  assert.deepEqual(selfOwner(), { ...space, pid: process.pid, start: readProcStat(process.pid)?.start });
});

test('a new pid namespace with its own /proc is another pid space of the same boot; without its own /proc, none', () => {
  const here = ownPidSpace();
  assert.ok(here !== null);
  const inner = spaceUnder(['--pid', '--fork', '--mount-proc']) as { pidNamespace: string; boot: string };
  assert.equal(inner.boot, here.boot);
  assert.notEqual(inner.pidNamespace, here.pidNamespace);
  assert.equal(spaceUnder(['--pid', '--fork']), null, "/proc shows the parent namespace's pids");
});
