/**
 * The state directory's one file-system edge: opens (creates) the per-user directory, refuses one that is not
 * provably private, writes records atomically (an exclusive 0600 temp file, then a rename), reads one record
 * without following links, and sweeps. Never throws: a directory that cannot hold records turns records off
 * (said once through `log`, and by status()), and a record that cannot be trusted is ignored and reported.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { decodeRecord, encodeRecord, MAX_RECORD_BYTES, type RunRecord } from './record.ts';
import { recordName, TEMP_PREFIX } from './paths.ts';
import { MAX_RECORDS, planSweep, RECORDS_AFTER_SWEEP, type SeenEntry } from './sweep.ts';

/** Why the server keeps no records. */
export type StateFault =
  | 'no_directory' // no home directory to derive one from, and none given
  | 'create_failed'
  | 'not_a_directory'
  | 'symlink'
  | 'wrong_owner'
  | 'wrong_mode' // group or others may read, write or enter it
  | 'foreign_owner' // an entry inside belongs to another user
  | 'unreadable'
  | 'write_failed'; // e.g. ENOSPC, EACCES, EROFS at a write

export interface StateStatus {
  readonly records: boolean;
  readonly dir: string | null;
  readonly reason: StateFault | null;
  /** The OS error code behind the reason, when there is one. */
  readonly detail: string | null;
  /** Entries and records ignored since the start (foreign names, corrupt or hostile records). */
  readonly ignored: number;
  /** Records and stale temp files removed by sweeps since the start. */
  readonly swept: number;
}

export interface StateStore {
  status(): StateStatus;
  /** Writes (replaces) a run's record; a failure turns records off. */
  write(record: RunRecord): void;
  /** A run's record, or null (none, records off, or ignored as untrustworthy: then reported). */
  read(runId: string): RunRecord | null;
  /** Removes what the bounds say goes (at start); returns how many went. */
  sweep(): number;
}

export interface StoreOptions {
  /** The directory; null when none could be named (records off). */
  readonly dir: string | null;
  readonly log: (line: string) => void;
  readonly nowMs: () => number;
  /** 8 random bytes per temp name. */
  readonly random: (bytes: number) => Uint8Array;
  /** This process's uid (records and the directory must be its own). */
  readonly uid: number;
}

interface Store {
  readonly options: StoreOptions;
  opened: boolean;
  fault: { reason: StateFault; detail: string | null } | null;
  ignored: number;
  swept: number;
  /** Records known to exist (after the start sweep, plus new names written since). */
  known: number;
  readonly reported: Set<string>;
}

/** Reported ignored entries are logged by name at most this many times (the count goes on in status()). */
export const MAX_IGNORED_LOGGED = 16;

export function openStateStore(options: StoreOptions): StateStore {
  const s: Store = { options, opened: false, fault: null, ignored: 0, swept: 0, known: 0, reported: new Set() };
  return {
    status: () => {
      ensureOpen(s);
      return {
        records: s.fault === null,
        dir: options.dir,
        reason: s.fault?.reason ?? null,
        detail: s.fault?.detail ?? null,
        ignored: s.ignored,
        swept: s.swept,
      };
    },
    write: (record) => write(s, record),
    read: (runId) => read(s, runId),
    sweep: () => (ensureOpen(s) ? sweepDir(s, MAX_RECORDS) : 0),
  };
}

function ensureOpen(s: Store): boolean {
  if (!s.opened) {
    s.opened = true;
    const fault = openDir(s.options);
    if (fault !== null) turnOff(s, fault.reason, fault.detail);
  }
  return s.fault === null;
}

function openDir({ dir, uid }: StoreOptions): { reason: StateFault; detail: string | null } | null {
  if (dir === null) return { reason: 'no_directory', detail: null };
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    // Something already has the name: what it is decides below.
    if (errnoOf(error) !== 'EEXIST') return { reason: 'create_failed', detail: errnoOf(error) };
  }
  try {
    const st = lstatSync(dir);
    if (st.isSymbolicLink()) return { reason: 'symlink', detail: null };
    if (!st.isDirectory()) return { reason: 'not_a_directory', detail: null };
    if (st.uid !== uid) return { reason: 'wrong_owner', detail: null };
    if ((st.mode & 0o077) !== 0) return { reason: 'wrong_mode', detail: (st.mode & 0o777).toString(8) };
  } catch (error) {
    return { reason: 'unreadable', detail: errnoOf(error) };
  }
  return null;
}

function turnOff(s: Store, reason: StateFault, detail: string | null): void {
  if (s.fault !== null) return;
  s.fault = { reason, detail };
  const where = s.options.dir === null ? 'no state directory' : `the state directory ${s.options.dir}`;
  s.options.log(
    `records of runs are off (${reason}${detail === null ? '' : `: ${detail}`}): ${where} cannot hold them; a later server cannot answer for this one's runs`,
  );
}

function report(s: Store, name: string, reason: string): void {
  s.ignored++;
  if (s.reported.has(name) || s.reported.size >= MAX_IGNORED_LOGGED) return;
  s.reported.add(name);
  s.options.log(`ignored ${name} in the state directory: ${reason}`);
}

function write(s: Store, record: RunRecord): void {
  if (!ensureOpen(s)) return;
  const dir = s.options.dir!;
  const target = join(dir, recordName(record.run_id));
  const temp = join(dir, TEMP_PREFIX + Buffer.from(s.options.random(8)).toString('hex'));
  let fd: number | null = null;
  try {
    const fresh = !exists(target);
    fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    const bytes = encodeRecord(record);
    let at = 0;
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
    closeSync(fd);
    fd = null;
    renameSync(temp, target);
    if (fresh && ++s.known > MAX_RECORDS) sweepDir(s, RECORDS_AFTER_SWEEP);
  } catch (error) {
    if (fd !== null) closeQuietly(fd);
    removeQuietly(temp);
    turnOff(s, 'write_failed', errnoOf(error));
  }
}

function read(s: Store, runId: string): RunRecord | null {
  if (!ensureOpen(s)) return null;
  const name = recordName(runId);
  let fd: number;
  try {
    fd = openSync(join(s.options.dir!, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ENOENT') return null;
    report(s, name, code === 'ELOOP' ? 'a symlink' : `unreadable (${code ?? 'error'})`);
    return null;
  }
  try {
    const problem = untrusted(fstatSync(fd), s.options.uid);
    if (problem !== null) {
      report(s, name, problem);
      return null;
    }
    const buffer = Buffer.alloc(MAX_RECORD_BYTES + 1);
    let length = 0;
    for (let n = 1; n > 0 && length < buffer.length; length += n) n = readSync(fd, buffer, length, buffer.length - length, null);
    const decoded = decodeRecord(buffer.subarray(0, length), runId);
    if (decoded.kind === 'invalid') {
      report(s, name, decoded.reason);
      return null;
    }
    return decoded.record;
  } catch (error) {
    report(s, name, `unreadable (${errnoOf(error) ?? 'error'})`);
    return null;
  } finally {
    closeQuietly(fd);
  }
}

/** Why a record's file cannot be trusted, or null: it must be a regular file of this user, private, with one link, within the bound. */
function untrusted(st: { isFile(): boolean; uid: number; mode: number; nlink: number; size: number }, uid: number): string | null {
  if (!st.isFile()) return 'not a regular file';
  if (st.uid !== uid) return 'owned by another user';
  if ((st.mode & 0o077) !== 0) return `mode ${(st.mode & 0o777).toString(8)} is not private`;
  // A second link could name a file outside the directory (a hard link made by whoever could write here).
  if (st.nlink !== 1) return 'has more than one link';
  if (st.size > MAX_RECORD_BYTES) return `larger than ${MAX_RECORD_BYTES} bytes`;
  return null;
}

function sweepDir(s: Store, keep: number): number {
  const dir = s.options.dir!;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    turnOff(s, 'unreadable', errnoOf(error));
    return 0;
  }
  const seen: SeenEntry[] = [];
  for (const name of names) {
    try {
      const st = lstatSync(join(dir, name));
      seen.push({ name, regular: st.isFile(), own: st.uid === s.options.uid, mtimeMs: st.mtimeMs });
    } catch {
      // Gone between the listing and the look: nothing to do.
    }
  }
  const plan = planSweep(seen, s.options.nowMs(), keep);
  for (const entry of plan.ignored) report(s, entry.name, entry.reason.replaceAll('_', ' '));
  // Another user's file in a private directory means someone else writes here: nothing in it is trusted.
  if (plan.ignored.some((entry) => entry.reason === 'foreign_owner')) {
    turnOff(s, 'foreign_owner', null);
    return 0;
  }
  let removed = 0;
  for (const name of plan.remove) if (removeQuietly(join(dir, name))) removed++;
  s.swept += removed;
  s.known = plan.kept;
  return removed;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function removeQuietly(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed.
  }
}

function errnoOf(error: unknown): string | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : null;
}
