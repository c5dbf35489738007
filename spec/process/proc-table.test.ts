import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { readProcStat, readProcStatLine, scanListing, type ProcListing } from '../../lib/process/proc-table.ts';
import { parseProcStat, type ProcStat } from '../../lib/process/proc-stat.ts';

/** A listing that yields the given names, throwing where an item is an Error (as Node's Dir.readSync does). */
function listing(items: ReadonlyArray<string | Error>): ProcListing {
  let i = 0;
  return {
    readSync() {
      const item = items[i++];
      if (item === undefined) return null;
      if (item instanceof Error) throw item;
      return { name: item };
    },
  };
}

const gone = (path: string, code = 'ENOENT'): Error => Object.assign(new Error(`${code}: lstat '${path}'`), { code, path });
function stat(pid: number): ProcStat {
  const parsed = parseProcStat(`${pid} (fake) S 1 ${pid} ${pid} 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0`);
  assert.ok(parsed);
  return parsed;
}

test('a process gone while /proc was listed (Node lstat()s its entry and throws): counted as vanished, the listing goes on', () => {
  const read = (pid: number): ProcStat | null => (pid === 7 ? null : stat(pid));
  const scan = scanListing(listing(['1', 'self', gone('/proc/13650'), '42', '7', 'sys']), read);
  assert.deepEqual(
    scan.table.map((s) => s.pid),
    [1, 42],
  );
  assert.deepEqual(scan.vanished, [13650, 7]);
});

test('any other listing error is not taken for a vanished process', () => {
  assert.throws(() => scanListing(listing(['1', gone('/proc/13650', 'EACCES')]), stat), /EACCES/);
  assert.throws(() => scanListing(listing([gone('/proc/self/fd')]), stat), /ENOENT/);
});

test("readProcStatLine: this process's own line, cut where parseProcStat reads it; null for a pid that is no process", () => {
  const line = readProcStatLine(process.pid);
  const stat = readProcStat(process.pid);
  assert.equal(line?.pid, process.pid);
  assert.equal(line?.comm, readFileSync('/proc/self/comm', 'latin1').trimEnd());
  assert.deepEqual([line?.fields[3], line?.fields[19]], [String(stat?.sid), stat?.start]);
  assert.equal(readProcStatLine(0), null);
});
