/**
 * The cgroup v2 edge on the real kernel (root here): detection leaves nothing, the freeze fallback (waiting for
 * `frozen 1`, and taken where cgroup.kill is refused), unreadable is not empty, rmdir retried on EBUSY, the sweep.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import {
  cgroupMembers,
  cgroupPopulation,
  describeCgroupKill,
  detectOwnCgroup,
  FREEZE_WAIT_MS,
  killCgroupMembers,
  removeCgroupTree,
  removeCgroupTreeSettled,
  RMDIR_RETRY_MS,
  runCgroupDir,
  sweepDeadCgroups,
  waitUntilEmpty,
} from '../../lib/process/cgroup.ts';
import { identityOf, type ProcessIdentity } from '../../lib/process/proc-stat.ts';
import { readProcStat, selfOwner } from '../../lib/process/proc-table.ts';
import type { OwnerIdentity } from '../../lib/process/owner.ts';
import { waitFor } from '../helpers/proc.ts';

const LAUNCH = new URL('../../fixtures/cgroup-launch.mjs', import.meta.url).pathname;
/** A tree that keeps forking: a parent that starts a child every 20 ms, each child sleeping. */
const FORKER =
  "const { spawn } = require('node:child_process'); setInterval(() => { spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' }); }, 20);";

function self(): OwnerIdentity {
  const owner = selfOwner();
  assert.ok(owner !== null);
  return owner;
}

function runDir(base: string, owner: ProcessIdentity): string {
  const dir = runCgroupDir(base, owner);
  assert.ok(dir !== null, 'this process knows its pid space');
  return dir;
}

function base(): string {
  const found = detectOwnCgroup(self());
  assert.ok(found.ok, JSON.stringify(found));
  return found.base;
}

/** Starts `script` born inside `dir` (the launcher steps in first, as the supervisor does for each spawn). */
function startInside(dir: string, script: string): void {
  spawn(process.execPath, [LAUNCH, dir, '0', '0', '--', '-e', script], { stdio: 'ignore', detached: true }).unref();
}

test('detection proves a child cgroup can be made and killed here, and leaves no directory behind', () => {
  const found = detectOwnCgroup(self());
  assert.ok(found.ok, JSON.stringify(found));
  assert.equal(found.kill, 'cgroup.kill');
  assert.equal(
    readdirSync(found.base).some((name) => name.includes(`.${process.pid}.`)),
    false,
  );
});

test('freeze, SIGKILL each, thaw (kernels without cgroup.kill): a tree that keeps forking is ended, populated 0', async () => {
  const dir = join(base(), `crm-spec-freeze-${process.pid}`);
  mkdirSync(dir);
  try {
    startInside(dir, FORKER);
    await waitFor('a forking tree of several processes', () => (cgroupMembers(dir) ?? []).length >= 4);
    let rounds = 0;
    const kills = [];
    while (cgroupPopulation(dir) === 'populated' && rounds < 20) {
      kills.push(await killCgroupMembers(dir, 'freeze'));
      rounds++;
      await waitUntilEmpty(dir, 200);
    }
    assert.equal(cgroupPopulation(dir), 'empty', `still populated after ${rounds} rounds`);
    // The first round froze the tree (the kernel said `frozen 1`) before it signalled its members.
    const first = kills[0];
    assert.ok(first?.how === 'freeze' && first.frozen && first.signalled >= 4, JSON.stringify(kills));
    assert.equal(describeCgroupKill(first), `cgroup.freeze:SIGKILL:${first.signalled}`);
  } finally {
    await killCgroupMembers(dir, 'cgroup.kill');
    await waitUntilEmpty(dir, 5000);
    removeCgroupTree(dir);
  }
});

test('the sweep ends and removes a cgroup whose owner is dead, and never touches one whose owner lives', async () => {
  const gone = spawn('/bin/true');
  const goneStat = readProcStat(gone.pid ?? -1);
  await new Promise((resolve) => gone.once('exit', resolve));
  assert.ok(goneStat !== null);
  const dead = runDir(base(), identityOf(goneStat));
  const init = readProcStat(1);
  assert.ok(init !== null);
  const live = runDir(base(), identityOf(init));
  mkdirSync(dead);
  mkdirSync(live);
  try {
    startInside(dead, 'setInterval(() => {}, 1 << 30)');
    startInside(live, 'setInterval(() => {}, 1 << 30)');
    await waitFor(
      'the launcher and its child in each',
      () => (cgroupMembers(dead) ?? []).length === 2 && (cgroupMembers(live) ?? []).length === 2,
    );
    const sweep = await sweepDeadCgroups(base());
    assert.ok(sweep.removed.includes(basename(dead)), JSON.stringify(sweep));
    assert.equal(sweep.removed.includes(basename(live)), false);
    assert.equal(
      sweep.kept.some((k) => k.name === basename(live)),
      false,
      "a live owner's cgroup is its own run's: not reported",
    );
    assert.equal(existsSync(dead), false);
    assert.equal(cgroupMembers(live)?.length, 2, "a live owner's cgroup is left alone");
  } finally {
    for (const dir of [dead, live]) {
      if (!existsSync(dir)) continue;
      await killCgroupMembers(dir, 'cgroup.kill');
      await waitUntilEmpty(dir, 5000);
      removeCgroupTree(dir);
    }
  }
});

/** A directory that looks like a cgroup to the readers: its cgroup.events says `text` (absent when null). */
function fakeCgroup(events: string | null): string {
  const dir = mkdtempSync(join(tmpdir(), 'crm-fake-cgroup-'));
  if (events !== null) writeFileSync(join(dir, 'cgroup.events'), events);
  return dir;
}

test(`the freeze fallback waits for \`frozen 1\` at most its bound (FREEZE_WAIT_MS, ${FREEZE_WAIT_MS} ms), then signals no listed pid (unfrozen, one may be reused) and says it was not frozen`, async () => {
  const never = fakeCgroup('populated 0\nfrozen 0\n');
  try {
    const started = performance.now();
    const kill = await killCgroupMembers(never, 'freeze', 150);
    assert.ok(performance.now() - started >= 149, 'it waited for its bound');
    assert.deepEqual(kill, { how: 'freeze', frozen: false, signalled: 0 });
    assert.equal(describeCgroupKill(kill), 'cgroup.freeze:unfrozen:SIGKILL:0');
  } finally {
    rmSync(never, { recursive: true, force: true });
  }
});

test('a member listed as 0 (outside this pid namespace) is never signalled: process.kill(0) would hit our own group', async () => {
  const dir = fakeCgroup('populated 1\nfrozen 1\n');
  writeFileSync(join(dir, 'cgroup.procs'), '0\n');
  try {
    // In a child of its own group and session: were 0 signalled, the child, not this file, would die by SIGKILL.
    const lib = new URL('../../lib/process/cgroup.ts', import.meta.url).href;
    const script = `import(${JSON.stringify(lib)}).then(async (m) => console.log(JSON.stringify(await m.killCgroupMembers(${JSON.stringify(dir)}, 'freeze', 1000))))`;
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const [code, signal] = (await new Promise((resolve) => child.on('exit', (c, s) => resolve([c, s])))) as [number | null, string | null];
    assert.deepEqual([code, signal], [0, null], 'the child was not killed by its own kill');
    assert.deepEqual(JSON.parse(out), { how: 'freeze', frozen: true, signalled: 0 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('in a threaded cgroup (cgroup.kill and cgroup.procs refused) the kill is the freeze fallback, and says so', async () => {
  const parent = join(base(), `crm-spec-threaded-${process.pid}`);
  const threaded = join(parent, 'run');
  mkdirSync(parent);
  mkdirSync(threaded);
  try {
    writeFileSync(join(threaded, 'cgroup.type'), 'threaded');
    startInside(threaded, 'setInterval(() => {}, 1 << 30)');
    await waitFor('the launcher and its child in the threaded cgroup', () => (cgroupMembers(threaded) ?? []).length >= 2);
    const kill = await killCgroupMembers(threaded, 'cgroup.kill');
    assert.ok(kill.how === 'freeze' && kill.frozen && kill.signalled >= 2, JSON.stringify(kill));
    assert.match(describeCgroupKill(kill), /^cgroup\.freeze:SIGKILL:\d+$/);
    assert.equal(await waitUntilEmpty(threaded, 10_000), true);
  } finally {
    await killCgroupMembers(threaded, 'freeze');
    await waitUntilEmpty(threaded, 5000);
    removeCgroupTree(parent);
  }
});

test(`rmdir of a cgroup is retried on EBUSY while its last member leaves, within its bound (RMDIR_RETRY_MS, ${RMDIR_RETRY_MS} ms)`, async () => {
  const dir = join(base(), `crm-spec-rmdir-${process.pid}`);
  mkdirSync(dir);
  try {
    startInside(dir, 'setInterval(() => {}, 1 << 30)');
    await waitFor('the launcher and its child', () => (cgroupMembers(dir) ?? []).length === 2);
    // At the bound: members that stay make it give up, after its bound, with the cgroup still there.
    const started = performance.now();
    assert.equal(await removeCgroupTreeSettled(dir, 150), false);
    assert.ok(performance.now() - started >= 149);
    assert.equal(existsSync(dir), true);
    // The first rmdir meets EBUSY (members live); the members are killed while it retries.
    const removing = removeCgroupTreeSettled(dir, 30_000);
    await killCgroupMembers(dir, 'cgroup.kill');
    assert.equal(await removing, true);
    assert.equal(existsSync(dir), false);
  } finally {
    if (existsSync(dir)) {
      await killCgroupMembers(dir, 'cgroup.kill');
      await waitUntilEmpty(dir, 5000);
      removeCgroupTree(dir);
    }
  }
});
