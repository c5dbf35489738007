// The state directory's file-system edge on real temp directories: private directory, atomic private records,
// bounds, and every fault turning records off (said once) or a record ignored (reported), never a throw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  linkSync,
  readFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStateStore, type StateStore } from '../../lib/state/store.ts';
import { recordName } from '../../lib/state/paths.ts';
import { MAX_RECORD_BYTES } from '../../lib/state/record.ts';
import { MAX_RECORD_AGE_MS, MAX_RECORDS, RECORDS_AFTER_SWEEP } from '../../lib/state/sweep.ts';
import { sampleRecord } from './sample-record.ts';

const UID = process.getuid?.() ?? -1;

function withDir(fn: (base: string) => void): void {
  const base = mkdtempSync(join(tmpdir(), 'crm-state-'));
  try {
    fn(base);
  } finally {
    chmodSync(base, 0o700);
    rmSync(base, { recursive: true, force: true });
  }
}

function store(dir: string | null, options: { uid?: number; nowMs?: number } = {}): { store: StateStore; log: string[] } {
  const log: string[] = [];
  const s = openStateStore({
    dir,
    log: (line) => log.push(line),
    nowMs: () => options.nowMs ?? Date.now(),
    random: randomBytes,
    uid: options.uid ?? UID,
  });
  return { store: s, log };
}

test('creates the directory 0700, writes records 0600 atomically (no temp left), and reads them back', () => {
  withDir((base) => {
    const dir = join(base, 'a', 'b', 'state');
    const { store: s, log } = store(dir);
    const record = sampleRecord();
    s.write(record);
    s.write({ ...record, state: 'completed' });
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.deepEqual(readdirSync(dir), [recordName(record.run_id)]);
    assert.equal(statSync(join(dir, recordName(record.run_id))).mode & 0o777, 0o600);
    assert.deepEqual(s.read(record.run_id), record);
    assert.equal(s.read(sampleRecord().run_id), null);
    assert.deepEqual(log, []);
    assert.deepEqual(s.status(), { records: true, dir, reason: null, detail: null, ignored: 0, swept: 0 });
  });
});

test('a directory that is not provably private turns records off, said once, and nothing is written or read', () => {
  withDir((base) => {
    const open = join(base, 'open');
    mkdirSync(open, { mode: 0o700 });
    chmodSync(open, 0o750);
    const file = join(base, 'file');
    writeFileSync(file, '');
    const target = join(base, 'target');
    mkdirSync(target, { mode: 0o700 });
    const link = join(base, 'link');
    symlinkSync(target, link);
    const cases: [string, string | null, number, string, string | null][] = [
      ['group may read', open, UID, 'wrong_mode', '750'],
      ['a file', file, UID, 'not_a_directory', null],
      ['a symlink', link, UID, 'symlink', null],
      ['another owner', target, UID + 4242, 'wrong_owner', null],
      ['under a file', join(file, 'state'), UID, 'create_failed', 'ENOTDIR'],
      ['no directory at all', null, UID, 'no_directory', null],
    ];
    for (const [what, dir, uid, reason, detail] of cases) {
      const { store: s, log } = store(dir, { uid });
      const record = sampleRecord();
      s.write(record);
      s.write(record);
      assert.equal(s.read(record.run_id), null, what);
      assert.equal(s.sweep(), 0, what);
      const status = s.status();
      assert.deepEqual([status.records, status.reason, status.detail], [false, reason, detail], what);
      assert.equal(log.length, 1, what);
      assert.match(log[0]!, new RegExp(`records of runs are off \\(${reason}`), what);
    }
    assert.deepEqual(readdirSync(target), []);
  });
});

test('a write that fails (the directory went away) turns records off once; reads then answer nothing', () => {
  withDir((base) => {
    const dir = join(base, 'state');
    const { store: s, log } = store(dir);
    const record = sampleRecord();
    s.write(record);
    rmSync(dir, { recursive: true });
    s.write(sampleRecord());
    s.write(sampleRecord());
    assert.deepEqual([s.status().records, s.status().reason, s.status().detail], [false, 'write_failed', 'ENOENT']);
    assert.equal(log.length, 1);
  });
});

test('hostile or broken records are ignored and reported by name: symlink, hard link, open mode, oversized, corrupt', () => {
  withDir((base) => {
    const dir = join(base, 'state');
    const { store: s, log } = store(dir);
    s.write(sampleRecord()); // creates the directory
    const outside = join(base, 'outside.json');
    const good = sampleRecord();
    s.write(good);
    writeFileSync(outside, readFileSync(join(dir, recordName(good.run_id)), 'utf8'), { mode: 0o600 });
    const ids = Array.from({ length: 5 }, () => sampleRecord().run_id);
    const paths = ids.map((id) => join(dir, recordName(id)));
    symlinkSync(outside, paths[0]!);
    linkSync(outside, paths[1]!);
    writeFileSync(paths[2]!, '{}', { mode: 0o644 });
    writeFileSync(paths[3]!, Buffer.alloc(MAX_RECORD_BYTES + 1, 0x20), { mode: 0o600 });
    writeFileSync(paths[4]!, '{"format_version":1,"run_', { mode: 0o600 });
    const reasons = [/a symlink/, /more than one link/, /mode 644 is not private/, /larger than 65536 bytes/, /corrupt or truncated/];
    ids.forEach((id, i) => {
      assert.equal(s.read(id), null);
      assert.match(log.at(-1)!, reasons[i]!);
      assert.ok(log.at(-1)!.includes(recordName(id)));
    });
    assert.equal(s.read(ids[0]!), null);
    assert.equal(log.length, 5, 'each name reported once');
    assert.equal(s.status().ignored, 6);
    assert.equal(s.status().records, true, 'a bad record turns nothing off');
    assert.deepEqual(s.read(good.run_id), good);
  });
});

test('the start sweep removes records past MAX_RECORD_AGE_MS and keeps and reports foreign names', () => {
  withDir((base) => {
    const dir = join(base, 'state');
    const now = Date.now();
    const { store: writer } = store(dir);
    const old = sampleRecord();
    const fresh = sampleRecord();
    writer.write(old);
    writer.write(fresh);
    const oldSeconds = (now - MAX_RECORD_AGE_MS - 1000) / 1000;
    utimesSync(join(dir, recordName(old.run_id)), oldSeconds, oldSeconds);
    writeFileSync(join(dir, 'notes.txt'), 'mine', { mode: 0o600 });
    const { store: s, log } = store(dir, { nowMs: now });
    assert.equal(s.sweep(), 1);
    assert.deepEqual(readdirSync(dir).sort(), [recordName(fresh.run_id), 'notes.txt'].sort());
    assert.match(log.join('\n'), /ignored notes\.txt in the state directory: foreign name/);
    assert.deepEqual([s.status().swept, s.status().ignored, s.status().records], [1, 1, true]);
  });
});

test('count: MAX_RECORDS records stay; the next new one sweeps down to RECORDS_AFTER_SWEEP, oldest first', () => {
  withDir((base) => {
    const dir = join(base, 'state');
    const { store: s } = store(dir);
    s.sweep();
    const first = sampleRecord();
    s.write(first);
    const t0 = (Date.now() - 60_000) / 1000;
    utimesSync(join(dir, recordName(first.run_id)), t0, t0);
    for (let i = 1; i < MAX_RECORDS; i++) s.write(sampleRecord());
    assert.equal(readdirSync(dir).length, MAX_RECORDS);
    s.write({ ...first, state: 'completed' }); // a rewrite is no new record
    utimesSync(join(dir, recordName(first.run_id)), t0, t0);
    assert.equal(readdirSync(dir).length, MAX_RECORDS);
    s.write(sampleRecord());
    assert.equal(readdirSync(dir).length, RECORDS_AFTER_SWEEP);
    assert.ok(!readdirSync(dir).includes(recordName(first.run_id)), 'the oldest went first');
    assert.equal(s.status().swept, MAX_RECORDS + 1 - RECORDS_AFTER_SWEEP);
  });
});
