// The pure readings behind the occupancy checks: a process's pids across pid namespaces (NSpid) and whether a
// /proc mount hides other users' processes (hidepid). Real /proc reads are covered in spec/worktree/remove.process.test.ts.
import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseNsPids, pidPresenceBySignal, procHidesProcesses, processesWithCwdUnverifiable } from '../../lib/process/occupants.ts';

describe('NSpid', () => {
  it('lists the pid at each namespace level, outermost first; [] when the line is missing', () => {
    assert.deepEqual(parseNsPids('Name:\tsleep\nTgid:\t4242\nNSpid:\t4242\t7\t1\nNSpgid:\t4242\n'), [4242, 7, 1]);
    assert.deepEqual(parseNsPids('Name:\tsleep\nNSpid:\t99\n'), [99]);
    assert.deepEqual(parseNsPids('Name:\tsleep\nTgid:\t4242\n'), []);
  });
});

describe('hidepid', () => {
  const line = (options: string, mountPoint = '/proc', fs = 'proc') =>
    `22 1 0:21 / ${mountPoint} rw,nosuid,nodev,noexec,relatime shared:12 - ${fs} ${fs} ${options}\n`;
  it('a /proc mounted with hidepid other than 0 or off hides processes', () => {
    assert.equal(procHidesProcesses(line('rw,hidepid=2')), true);
    assert.equal(procHidesProcesses(line('rw,hidepid=invisible,gid=5')), true);
    assert.equal(procHidesProcesses(line('rw,hidepid=noaccess')), true);
  });
  it('without hidepid, with hidepid=0 or off, or on another mount point, it does not', () => {
    assert.equal(procHidesProcesses(line('rw')), false);
    assert.equal(procHidesProcesses(line('rw,hidepid=0')), false);
    assert.equal(procHidesProcesses(line('rw,hidepid=off')), false);
    assert.equal(procHidesProcesses(line('rw,hidepid=2', '/other/proc')), false);
    assert.equal(procHidesProcesses(line('rw,hidepid=2', '/proc', 'tmpfs')), false);
  });
});

test('pidPresenceBySignal (the darwin path): signal 0 only; ESRCH gone, success or EPERM lives, anything else unprovable', () => {
  const sent: [number, number][] = [];
  const answering = (code: string | null) => (pid: number, signal: 0) => {
    sent.push([pid, signal]);
    if (code !== null) throw Object.assign(new Error(code), { code });
  };
  assert.equal(pidPresenceBySignal(42, answering(null)), 'lives');
  assert.equal(pidPresenceBySignal(42, answering('EPERM')), 'lives', "another user's process");
  assert.equal(pidPresenceBySignal(42, answering('ESRCH')), 'gone');
  assert.equal(pidPresenceBySignal(42, answering('EINVAL')), 'unprovable');
  assert.deepEqual(sent, [
    [42, 0],
    [42, 0],
    [42, 0],
    [42, 0],
  ]);
  for (const pid of [0, -1, 1.5, Number.NaN]) assert.equal(pidPresenceBySignal(pid, answering(null)), 'unprovable', String(pid));
  assert.equal(sent.length, 4, 'a non-positive or fractional pid is never signalled (0 and -1 would reach groups)');
  assert.equal(pidPresenceBySignal(process.pid), 'lives', 'the real process table: this process');
  assert.deepEqual(processesWithCwdUnverifiable(), { unverifiable: 'no /proc on macOS: no process cwd can be read' });
});
