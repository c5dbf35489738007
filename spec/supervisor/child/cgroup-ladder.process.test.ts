/**
 * The cgroup ladder on the real kernel (root here): an unreadable cgroup.events is never taken for empty, a
 * threaded cgroup's kill is named as the freeze it was, and a process that wrote itself out of the run's cgroup
 * is found by the run's marker in one scan, ended, and the run left unconfirmed. The last also end to end,
 * with the real supervisor and a fake native whose child leaves the run's cgroup.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { cgroupMembers, detectOwnCgroup, killCgroupMembers, removeCgroupTree, waitUntilEmpty } from '../../../lib/process/cgroup.ts';
import { compareStart, identityOf } from '../../../lib/process/proc-stat.ts';
import { environMarker, readProcStat, scanProcTable, selfOwner } from '../../../lib/process/proc-table.ts';
import { RUN_MARKER_ENV } from '../../../lib/supervisor/protocol.ts';
import { runCgroupLadder, type CgroupLadderTarget, type EscapeLookup } from '../../../lib/supervisor/child/cgroup-ladder.ts';
import type { CgroupScope } from '../../../lib/supervisor/child/cgroup-scope.ts';
import { cleanupBackendFor } from '../../../lib/supervisor/parent/cleanup-backend.ts';
import { aliveNaming, killPids } from '../../faults/escape-helpers.ts';
import { readReadyLines, waitFor } from '../../helpers/proc.ts';
import { startFake } from '../harness.ts';

const LAUNCH = new URL('../../../fixtures/cgroup-launch.mjs', import.meta.url).pathname;
const GRACE = { interrupt: false, interruptGraceMs: 0, termGraceMs: 300, killGraceMs: 2000 } as const;

function self() {
  const stat = readProcStat(process.pid);
  assert.ok(stat !== null);
  return identityOf(stat);
}

function base(): string {
  const owner = selfOwner();
  assert.ok(owner !== null);
  const found = detectOwnCgroup(owner);
  assert.ok(found.ok, JSON.stringify(found));
  return found.base;
}

function scopeOf(dir: string, kill: CgroupScope['kill']): CgroupScope {
  return { dir, base: base(), kill, spawnInside: () => null, stuckInside: () => false };
}

function target(scope: CgroupScope, escapes: EscapeLookup | null = null): CgroupLadderTarget {
  return { selfPid: process.pid, groupMode: false, scope, escapes, nativeExited: () => true, interruptNative: () => {} };
}

async function endAndRemove(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  await killCgroupMembers(dir, 'freeze');
  await waitUntilEmpty(dir, 5000);
  removeCgroupTree(dir);
}

test('a run cgroup whose cgroup.events cannot be read is killed all the same and never confirmed', async () => {
  // A directory without cgroup.events: it exists, and says nothing of its members.
  const dir = mkdtempSync(join(tmpdir(), 'crm-unreadable-'));
  try {
    const outcome = await runCgroupLadder(target(scopeOf(dir, 'cgroup.kill')), GRACE);
    assert.match(String(outcome.error), /cgroup\.events of the run's cgroup .* cannot be read/);
    assert.ok(outcome.steps.includes('cgroup.kill'), JSON.stringify(outcome.steps));
    assert.equal(outcome.steps.includes('cgroup:empty'), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('in a threaded run cgroup the report names the freeze that ended it, not cgroup.kill', async () => {
  const parent = join(base(), `crm-spec-ladder-threaded-${process.pid}`);
  const dir = join(parent, 'run');
  const scratch = mkdtempSync(join(tmpdir(), 'crm-threaded-'));
  const ready = join(scratch, 'ready');
  mkdirSync(parent);
  mkdirSync(dir);
  try {
    writeFileSync(join(dir, 'cgroup.type'), 'threaded');
    // Ignores SIGTERM (the launcher passes it on), so the kill step is reached; says so once it does.
    const script =
      "process.on('SIGTERM', () => {}); require('node:fs').writeFileSync(process.argv[1], 'ready'); setInterval(() => {}, 1 << 30)";
    spawn(process.execPath, [LAUNCH, dir, '0', '0', '--', '-e', script, ready], { stdio: 'ignore', detached: true }).unref();
    await waitFor('the child in the threaded cgroup, SIGTERM ignored', () => existsSync(ready));
    const outcome = await runCgroupLadder(target(scopeOf(dir, 'cgroup.kill')), GRACE);
    assert.equal(outcome.error, null, JSON.stringify(outcome));
    assert.ok(
      outcome.steps.some((step) => /^cgroup\.freeze:SIGKILL:\d+$/.test(step)),
      JSON.stringify(outcome.steps),
    );
    assert.equal(outcome.steps.includes('cgroup.kill'), false, JSON.stringify(outcome.steps));
    assert.equal(outcome.steps.at(-1), 'cgroup:empty');
  } finally {
    await endAndRemove(dir);
    removeCgroupTree(parent);
    rmSync(scratch, { recursive: true, force: true });
  }
});

test("after populated 0, one scan finds the run's marker on a process that left the cgroup: it is killed and the run unconfirmed", async () => {
  const run = join(base(), `crm-spec-ladder-run-${process.pid}`);
  const elsewhere = join(base(), `crm-spec-ladder-elsewhere-${process.pid}`);
  const scratch = mkdtempSync(join(tmpdir(), 'crm-leave-'));
  const ready = join(scratch, 'ready');
  mkdirSync(run);
  mkdirSync(elsewhere);
  const marker = randomBytes(16).toString('hex');
  // Born in the run's cgroup with the run's marker, it writes itself into another cgroup, then says so.
  const leave = `process.on('SIGTERM', () => {}); require('node:fs').writeFileSync(process.argv[2] + '/cgroup.procs', String(process.pid)); require('node:fs').writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1 << 30)`;
  spawn(process.execPath, [LAUNCH, run, '0', '0', '--', '-e', leave, ready, elsewhere], {
    stdio: 'ignore',
    detached: true,
    env: { ...process.env, [RUN_MARKER_ENV]: marker },
  }).unref();
  const notBefore = self().start;
  let scans = 0;
  const escapes: EscapeLookup = {
    scan: () => {
      scans++;
      return scanProcTable();
    },
    carriesMarker: (stat) => compareStart(stat.start, notBefore) >= 0 && environMarker(stat.pid, RUN_MARKER_ENV, marker) === 'yes',
  };
  try {
    await waitFor('the child out of the run cgroup', () => existsSync(ready) && (cgroupMembers(elsewhere) ?? []).length === 1);
    const leaver = Number(process.getBuiltinModule('node:fs').readFileSync(ready, 'utf8'));
    assert.deepEqual(cgroupMembers(elsewhere), [leaver]);
    const outcome = await runCgroupLadder(target(scopeOf(run, 'cgroup.kill'), escapes), GRACE);
    assert.equal(scans, 1, 'the marker pass is one scan of the process table');
    assert.match(String(outcome.error), new RegExp(`1 process\\(es\\) of the run left its cgroup \\(pid ${leaver}\\)`));
    assert.deepEqual(outcome.survivors, []);
    assert.ok(outcome.steps.includes('marker:SIGKILL:1'), JSON.stringify(outcome.steps));
    assert.equal(readProcStat(leaver)?.state === undefined || readProcStat(leaver)?.state === 'Z', true, 'the leaver is dead');
    await waitFor('the other cgroup empty (the leaver reaped)', () => (cgroupMembers(elsewhere) ?? []).length === 0);
  } finally {
    await endAndRemove(run);
    await endAndRemove(elsewhere);
    rmSync(scratch, { recursive: true, force: true });
  }
});

test('a run whose cgroup stays whole is proven by one scan too, and confirmed', async () => {
  const run = join(base(), `crm-spec-ladder-whole-${process.pid}`);
  mkdirSync(run);
  let scans = 0;
  const escapes: EscapeLookup = {
    scan: () => {
      scans++;
      return scanProcTable();
    },
    carriesMarker: () => false,
  };
  try {
    spawn(process.execPath, [LAUNCH, run, '0', '0', '--', '-e', 'setInterval(() => {}, 1 << 30)'], {
      stdio: 'ignore',
      detached: true,
    }).unref();
    await waitFor('the launcher and its child', () => (cgroupMembers(run) ?? []).length === 2);
    const outcome = await runCgroupLadder(target(scopeOf(run, 'cgroup.kill'), escapes), GRACE);
    assert.deepEqual({ error: outcome.error, last: outcome.steps.at(-1), scans }, { error: null, last: 'cgroup:empty', scans: 1 });
    assert.equal(existsSync(run), false);
  } finally {
    await endAndRemove(run);
  }
});

test("end to end: a native's child that writes itself into another cgroup is killed by the supervisor, and the run is not confirmed", async () => {
  const elsewhere = join(base(), `crm-spec-leave-${process.pid}`);
  mkdirSync(elsewhere);
  const cleanup = cleanupBackendFor('cgroup');
  const fake = startFake('escape', {
    env: { FAKE_CLAUDE_ESCAPE: 'cgroup_leave', FAKE_CLAUDE_LEAVE_CGROUP: elsewhere },
    spec: { interruptGraceMs: 1500, termGraceMs: 800, killGraceMs: 2000, trackIntervalMs: 50 },
    cleanup,
  });
  try {
    const outcome = await fake.run.done;
    const escapee = readReadyLines(fake.readyFile).find((line) => line.ready === 'escapee');
    assert.ok(escapee !== undefined, 'the child announced itself from the other cgroup');
    assert.deepEqual(outcome.exit, { code: 0, signal: null });
    assert.equal(outcome.cleanup?.confirmed, false, JSON.stringify(outcome.cleanup));
    assert.equal(outcome.cleanup?.proof, 'cgroup');
    assert.match(String(outcome.cleanup?.error), new RegExp(`left its cgroup \\(pid ${escapee.pid}\\)`));
    assert.ok(outcome.cleanup?.steps.includes('marker:SIGKILL:1'), JSON.stringify(outcome.cleanup?.steps));
    // On the real process table: nothing that names the run's ready file lives, and the other cgroup is empty.
    assert.deepEqual(aliveNaming(fake.readyFile), []);
    await waitFor('the other cgroup empty (the escapee reaped)', () => (cgroupMembers(elsewhere) ?? []).length === 0);
  } finally {
    killPids(aliveNaming(fake.readyFile));
    await endAndRemove(elsewhere);
    fake.dispose();
  }
});
