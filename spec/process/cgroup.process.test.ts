/** The cgroup v2 edge on the real kernel (root here): detection leaves nothing, the freeze fallback, the sweep. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import {
  cgroupMembers,
  cgroupPopulated,
  detectOwnCgroup,
  killCgroupMembers,
  removeCgroupTree,
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
    while (cgroupPopulated(dir) === true && rounds < 20) {
      killCgroupMembers(dir, 'freeze');
      rounds++;
      await waitUntilEmpty(dir, 200);
    }
    assert.equal(cgroupPopulated(dir), false, `still populated after ${rounds} rounds`);
  } finally {
    killCgroupMembers(dir, 'cgroup.kill');
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
      killCgroupMembers(dir, 'cgroup.kill');
      await waitUntilEmpty(dir, 5000);
      removeCgroupTree(dir);
    }
  }
});
