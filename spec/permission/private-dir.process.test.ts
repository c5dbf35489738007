// The private directories of run brokers carry their server's identity; a later server removes only those
// whose server is provably gone (pid + start time in the same pid namespace and boot), never a live server's, never
// an anonymous name, another namespace's, a symlink or a plain file. The sweep runs against real processes.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { orphanedDirs, parseDirOwner, privateDirPrefix, type DirOwner } from '../../lib/permission/private-dir.ts';
import { DARWIN_PID_SPACE, psDirOwner, psOwnerState, sweepOrphanedPermissionDirs } from '../../lib/tools/permission-dirs.ts';
import { selfOwner } from '../../lib/process/proc-table.ts';
import { readPsTable } from '../../lib/process/ps-source.ts';
import type { PsRow } from '../../lib/process/ps-table.ts';
import { createPermissionBroker } from '../../lib/permission/broker.ts';
import { systemClock } from '../../lib/util/clock.ts';
import { randomBytes } from 'node:crypto';

// Short: a broker's socket path (this base, its owner-named directory, bridge.sock) must fit a Unix socket path.
const base = mkdtempSync(join(tmpdir(), 'crm-pd-'));
after(() => rmSync(base, { recursive: true, force: true }));

const startOf = (pid: number): string => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
};
const nameOf = (owner: DirOwner, suffix = 'AbC123'): string => `${privateDirPrefix(owner)}${suffix}`;

const BOOT = '0123456789abcdef';
const OTHER_BOOT = 'fedcba9876543210';

test("names: an owner round-trips through the name; anonymous, foreign and earlier releases' names have no owner", () => {
  const owner = { pidNamespace: '4026531836', pid: 4242, start: '987654', boot: BOOT };
  assert.equal(nameOf(owner), `crm-perm-1ulajuk.39u.l62u.${BOOT}-AbC123`);
  assert.deepEqual(parseDirOwner(nameOf(owner)), owner);
  for (const name of [
    'crm-perm-AbC123',
    'crm-perm-1.2.3-AbC123',
    `crm-perm-1.2.3.${BOOT}-AbC12`,
    `crm-perm-1.0.3.${BOOT}-AbC123`,
    `crm-perm-X.2.3.${BOOT}-AbC123`,
    `crm-perm-1.2.3.${BOOT.slice(1)}-AbC123`,
    'other-1.2.3-AbC123',
    `${nameOf(owner)}/x`,
  ]) {
    assert.equal(parseDirOwner(name), null, name);
  }
  assert.equal(privateDirPrefix(null), 'crm-perm-');
});

test('orphanedDirs: only owners of this namespace and boot that are gone; never this server, never unknown', () => {
  const self = { pidNamespace: '7', pid: 10, start: '100', boot: BOOT };
  const names = [
    nameOf({ pidNamespace: '7', pid: 11, start: '5', boot: BOOT }, 'gone01'),
    nameOf({ pidNamespace: '7', pid: 12, start: '5', boot: BOOT }, 'alive1'),
    nameOf({ pidNamespace: '7', pid: 13, start: '5', boot: BOOT }, 'unkno1'),
    nameOf({ pidNamespace: '8', pid: 11, start: '5', boot: BOOT }, 'othns1'),
    nameOf({ pidNamespace: '7', pid: 11, start: '5', boot: OTHER_BOOT }, 'othbt1'),
    nameOf(self, 'self01'),
    'crm-perm-7.11.5-legac1',
    'crm-perm-anon01',
  ];
  const state = (o: { pid: number }): 'alive' | 'gone' | 'unknown' => (o.pid === 12 ? 'alive' : o.pid === 13 ? 'unknown' : 'gone');
  assert.deepEqual(orphanedDirs(names, self, state), [names[0]]);
});

test('the sweep against the real process table: a dead server and a recycled pid go; live, own, foreign and odd entries stay', async () => {
  const self = selfOwner();
  assert.ok(self, 'this process can name itself');
  assert.equal(self.pid, process.pid);
  const dir = mkdtempSync(join(base, 'sweep-'));
  const live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  const dead = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  try {
    await Promise.all([once(live, 'spawn'), once(dead, 'spawn')]);
    const liveOwner = { ...self, pid: live.pid!, start: startOf(live.pid!) };
    const deadOwner = { ...self, pid: dead.pid!, start: startOf(dead.pid!) };
    dead.kill('SIGKILL');
    await once(dead, 'exit');
    const entries = {
      dead: nameOf(deadOwner, 'dead01'),
      recycled: nameOf({ ...self, start: String(BigInt(self.start) + 1n) }, 'recyc1'),
      live: nameOf(liveOwner, 'live01'),
      own: nameOf(self, 'own001'),
      otherNamespace: nameOf({ ...deadOwner, pidNamespace: '1' }, 'othns1'),
      anonymous: 'crm-perm-anon01',
    };
    for (const name of Object.values(entries)) {
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, 'bridge.sock'), '');
    }
    // A symlink and a plain file under a dead owner's name: neither is a directory of ours to remove.
    const target = mkdtempSync(join(base, 'target-'));
    writeFileSync(join(target, 'keep'), '');
    const link = nameOf(deadOwner, 'link01');
    symlinkSync(target, join(dir, link));
    const file = nameOf(deadOwner, 'file01');
    writeFileSync(join(dir, file), '');

    const removed = sweepOrphanedPermissionDirs(dir, self);
    assert.deepEqual(removed.sort(), [entries.dead, entries.recycled].sort());
    for (const [label, name] of Object.entries(entries)) assert.equal(existsSync(join(dir, name)), !removed.includes(name), label);
    assert.ok(existsSync(join(dir, link)) && existsSync(join(target, 'keep')), 'the symlink and what it points to are untouched');
    assert.ok(existsSync(join(dir, file)));
    assert.deepEqual(sweepOrphanedPermissionDirs(dir, self), [], 'a second sweep finds nothing');
  } finally {
    live.kill('SIGKILL');
    dead.kill('SIGKILL');
  }
});

test('a broker names its directory after its server, and an exit that runs code removes it', async () => {
  const self = selfOwner()!;
  const broker = createPermissionBroker({
    clock: systemClock,
    random: (n) => randomBytes(n),
    boundMs: 1000,
    baseDir: base,
    dirPrefix: privateDirPrefix(self),
  });
  const name = basename(join(broker.socketPath, '..'));
  assert.deepEqual(parseDirOwner(name), self);
  broker.close();
  assert.equal(existsSync(join(base, name)), false);
  // A process that exits (process.exit, no close) with an open broker leaves nothing behind.
  const script = `
    import { createPermissionBroker } from ${JSON.stringify(new URL('../../lib/permission/broker.ts', import.meta.url).href)};
    const b = createPermissionBroker({ clock: { now: Date.now, wallNow: Date.now, setTimeout: (f, ms) => { const t = setTimeout(f, ms); return () => clearTimeout(t); } }, random: (n) => new Uint8Array(n), boundMs: 1000, baseDir: ${JSON.stringify(base)} });
    process.stdout.write(b.socketPath + '\\n');
    setTimeout(() => process.exit(3), 50);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  const [code] = await once(child, 'exit');
  assert.equal(code, 3);
  const socketPath = out.trim();
  assert.match(socketPath, /crm-perm-/);
  assert.equal(existsSync(join(socketPath, '..')), false, 'removed by the exit hook');
});

const psRow = (pid: number, lstart: string | null, stat = 'S'): PsRow => ({
  pid,
  ppid: 1,
  pgid: pid,
  stat,
  start: lstart === null ? null : { lstart, resolution: 'second' },
  command: 'node',
});

test('darwin owners from a ps table: pid space 0, the start second as digits; gone when absent, restarted or a zombie', () => {
  const rows = [psRow(10, '2026-12-03T17:16:48'), psRow(11, '2026-12-03T17:16:49', 'Z'), psRow(12, null)];
  assert.deepEqual(psDirOwner(rows, 10), { ...DARWIN_PID_SPACE, pid: 10, start: '20261203171648' });
  assert.equal(psDirOwner(rows, 12), null, 'no start shown: no identity');
  assert.equal(psDirOwner(rows, 99), null);
  const state = psOwnerState(rows);
  const owner = (pid: number, start: string): DirOwner => ({ ...DARWIN_PID_SPACE, pid, start });
  assert.equal(state(owner(10, '20261203171648')), 'alive');
  assert.equal(state(owner(10, '20261203171647')), 'gone', 'the pid now names a process started another second');
  assert.equal(state(owner(11, '20261203171649')), 'gone', 'a zombie');
  assert.equal(state(owner(12, '20261203171649')), 'unknown', 'ps showed no start');
  assert.equal(state(owner(99, '20261203171649')), 'gone');
  assert.ok(parseDirOwner(`${privateDirPrefix(owner(10, '20261203171648'))}abc123`), 'the name parses back');
});

test('the darwin sweep against the real ps table: a dead owner goes; a live one and this process stay', async () => {
  const table = await readPsTable({ path: process.env['PATH'] ?? '' });
  assert.equal(table.kind, 'table');
  if (table.kind !== 'table') return;
  const self = psDirOwner(table.rows, process.pid);
  assert.ok(self !== null && self.pidNamespace === DARWIN_PID_SPACE.pidNamespace && self.boot === DARWIN_PID_SPACE.boot);
  const dir = mkdtempSync(join(base, 'ps-sweep-'));
  const live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  const dead = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  try {
    await Promise.all([once(live, 'spawn'), once(dead, 'spawn')]);
    const before = await readPsTable({ path: process.env['PATH'] ?? '' });
    assert.equal(before.kind, 'table');
    if (before.kind !== 'table') return;
    const liveOwner = psDirOwner(before.rows, live.pid!);
    const deadOwner = psDirOwner(before.rows, dead.pid!);
    assert.ok(liveOwner !== null && deadOwner !== null);
    dead.kill('SIGKILL');
    await once(dead, 'exit');
    const names = { live: nameOf(liveOwner, 'live01'), dead: nameOf(deadOwner, 'dead01'), own: nameOf(self, 'own001') };
    for (const name of Object.values(names)) mkdirSync(join(dir, name));
    const after = await readPsTable({ path: process.env['PATH'] ?? '' });
    assert.equal(after.kind, 'table');
    if (after.kind !== 'table') return;
    assert.deepEqual(sweepOrphanedPermissionDirs(dir, self, psOwnerState(after.rows)), [names.dead]);
    assert.ok(existsSync(join(dir, names.live)) && existsSync(join(dir, names.own)));
  } finally {
    live.kill('SIGKILL');
    dead.kill('SIGKILL');
  }
});
