/**
 * Reads the live Linux process table from /proc (synchronous). One scan reads one small file per process,
 * with plain open/read/close into a reused buffer: readFileSync costs about twice as much per file, and
 * the supervisor scans on every tracking tick and during cleanup.
 */
import { closeSync, opendirSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from 'node:fs';
import {
  isLive,
  parseProcStat,
  parseProcStatBytes,
  splitProcStat,
  type ProcessIdentity,
  type ProcStat,
  type ProcStatLine,
} from './proc-stat.ts';
import { parsePidSpace, type OwnerIdentity, type PidSpace, type ProcessState } from './owner.ts';

/** A stat line is a few hundred bytes; a file that fills this buffer is read again whole. */
const STAT_BUFFER_BYTES = 4096;
const buffer = Buffer.allocUnsafe(STAT_BUFFER_BYTES);

/** The contents of a small /proc file as latin1 text; throws like readFileSync when it cannot be read. */
export function readProcFile(path: string): string {
  const fd = openSync(path, 'r');
  let length: number;
  try {
    length = readSync(fd, buffer, 0, STAT_BUFFER_BYTES, null);
  } finally {
    closeSync(fd);
  }
  return length < STAT_BUFFER_BYTES ? buffer.toString('latin1', 0, length) : readFileSync(path, 'latin1');
}

/** The stat of `pid`, or null when it no longer exists (or cannot be read). */
export function readProcStat(pid: number): ProcStat | null {
  let length: number;
  try {
    const fd = openSync(`/proc/${pid}/stat`, 'r');
    try {
      length = readSync(fd, buffer, 0, STAT_BUFFER_BYTES, null);
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  // Straight from the bytes: a scan reads every process's stat, and a split into 52 strings each costs more
  // than the read. Anything unusual (a comm line that fills the buffer) takes the text path.
  return (length < STAT_BUFFER_BYTES ? parseProcStatBytes(buffer, length) : null) ?? parseProcStat(buffer.toString('latin1', 0, length));
}

/** Every process visible in /proc; processes that vanish mid-scan are skipped. */
export function readProcTable(): ProcStat[] {
  return scanProcTable().table;
}

/** One pass over /proc, with what a proof needs to know about it. */
export interface ProcScan {
  /** Every process read, zombies included. */
  readonly table: ProcStat[];
  /** Pids the listing named that were gone when their entry was read: they may have forked after the listing. */
  readonly vanished: number[];
  /** From the start of the listing to the last read. */
  readonly durationMs: number;
}

/** Directory entries fetched per getdents call during a scan. */
const LISTING_BATCH_ENTRIES = 32;

/** Lists /proc, reading each process's stat as it is listed; a listed pid gone by then is reported, not dropped. */
export function scanProcTable(): ProcScan {
  const started = performance.now();
  // Each entry is read right after the kernel listed it (a few dozen at a time), not after the whole listing:
  // on a busy machine, processes of other jobs that die between their listing and their read would otherwise
  // make most scans unusable as proof.
  const dir = opendirSync('/proc', { bufferSize: LISTING_BATCH_ENTRIES });
  try {
    return { ...scanListing(dir, readProcStat), durationMs: performance.now() - started };
  } finally {
    dir.closeSync();
  }
}

/** The directory reader a scan needs (a node:fs Dir). */
export interface ProcListing {
  readSync(): { readonly name: string } | null;
}

/**
 * The pass over a /proc listing. The kernel lists a process that exits while it is being listed with an
 * unknown type, and Node then lstat()s the entry and throws ENOENT, dropping the rest of that batch: the pid
 * counts as vanished (so the scan proves nothing) and the listing goes on with the next batch.
 */
export function scanListing(dir: ProcListing, readStat: (pid: number) => ProcStat | null): Omit<ProcScan, 'durationMs'> {
  const table: ProcStat[] = [];
  const vanished: number[] = [];
  for (;;) {
    let entry: { readonly name: string } | null;
    try {
      entry = dir.readSync();
    } catch (error) {
      const pid = vanishedEntryPid(error);
      if (pid === null) throw error;
      vanished.push(pid);
      continue;
    }
    if (entry === null) return { table, vanished };
    const code = entry.name.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    const pid = Number(entry.name);
    const stat = readStat(pid);
    if (stat) table.push(stat);
    else vanished.push(pid);
  }
}

/** The pid of a `/proc/<pid>` entry that was gone when Node looked at it; null for any other error. */
function vanishedEntryPid(error: unknown): number | null {
  const { code, path } = (error ?? {}) as { code?: unknown; path?: unknown };
  const match = code === 'ENOENT' && typeof path === 'string' ? /^\/proc\/(\d+)$/.exec(path) : null;
  return match === null ? null : Number(match[1]);
}

/** The last pid the kernel allocated in this pid namespace; null when it cannot be read. */
export function lastAllocatedPid(): number | null {
  try {
    const value = Number(readProcFile('/proc/sys/kernel/ns_last_pid').trim());
    return Number.isSafeInteger(value) && value > 0 ? value : null;
  } catch {
    return null;
  }
}

/** Whether `pid` is a process (a thread-group leader) rather than another thread of one; null when gone. */
export function isProcess(pid: number): boolean | null {
  try {
    const match = /^Tgid:\s+(\d+)/m.exec(readProcFile(`/proc/${pid}/status`));
    return match === null ? null : Number(match[1]) === pid;
  } catch {
    return null;
  }
}

/**
 * What /proc/<pid>/environ says of the exact entry `name=value`: `unreadable` when reading it is refused
 * (another user's process, or one that made itself non-dumpable); `empty` when nothing could be read (a process
 * gone or exiting, a kernel thread, or one started with an empty environment: a "no" that cannot be final at
 * once, since an exiting process of the run reads this way too). The environment a process was started with is
 * what /proc shows, and it is passed on to every child that does not replace it.
 */
export function environMarker(pid: number, name: string, value: string): 'yes' | 'no' | 'empty' | 'unreadable' {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'EACCES' || code === 'EPERM' ? 'unreadable' : 'empty';
  }
  if (environ.length === 0) return 'empty';
  const entry = Buffer.from(`${name}=${value}\0`, 'utf8');
  for (let at = environ.indexOf(entry); at >= 0; at = environ.indexOf(entry, at + 1)) {
    if (at === 0 || environ[at - 1] === 0) return 'yes';
  }
  return 'no';
}

/** Whether /proc/<pid>/environ holds `name=value`; null when reading it is refused. */
export function environHas(pid: number, name: string, value: string): boolean | null {
  const found = environMarker(pid, name, value);
  return found === 'unreadable' ? null : found === 'yes';
}

/** The real uid of `pid` from /proc/<pid>/status (readable even for a non-dumpable process); null when gone. */
export function processUid(pid: number): number | null {
  try {
    const match = /^Uid:\s+(\d+)/m.exec(readProcFile(`/proc/${pid}/status`));
    return match === null ? null : Number(match[1]);
  } catch {
    return null;
  }
}

/** The stat line of `pid` cut at its command name; null when it cannot be read. */
export function readProcStatLine(pid: number): ProcStatLine | null {
  try {
    return splitProcStat(readProcFile(`/proc/${pid}/stat`));
  } catch {
    return null;
  }
}

/** Whether `pid` has a child (alive or unreaped) in any of its threads; null when that cannot be read. */
export function hasChildren(pid: number): boolean | null {
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      if (readProcFile(`/proc/${pid}/task/${tid}/children`).trim() !== '') return true;
    }
    return false;
  } catch {
    return null;
  }
}

/**
 * Whether /proc is this process's pid namespace's own: `/proc/self` names this process by its own pid. Under
 * `unshare -p` without a /proc of its own, /proc lists another namespace's processes by their pids there.
 */
export function procIsOwn(): boolean {
  try {
    return readlinkSync('/proc/self') === String(process.pid);
  } catch {
    return false;
  }
}

/** A process never changes pid namespace (setns and unshare move only its later children): read once. */
let ownSpace: PidSpace | null | undefined;

/**
 * This process's pid space (its pid namespace and the boot); null when /proc cannot say, or shows the pids of
 * another namespace than this process's (`unshare -p` without a /proc of its own: /proc/self then names this
 * process by another pid), where no pid read in /proc could be judged.
 */
export function ownPidSpace(): PidSpace | null {
  if (ownSpace === undefined) {
    try {
      const ownProc = readlinkSync('/proc/self') === String(process.pid);
      ownSpace = ownProc ? parsePidSpace(readlinkSync('/proc/self/ns/pid'), readProcFile('/proc/sys/kernel/random/boot_id')) : null;
    } catch {
      ownSpace = null;
    }
  }
  return ownSpace;
}

/** This process as an owner; null when /proc cannot say who it is. */
export function selfOwner(): OwnerIdentity | null {
  const space = ownPidSpace();
  const stat = readProcStat(process.pid);
  return space === null || stat === null ? null : { ...space, pid: stat.pid, start: stat.start };
}

/** Gone only when /proc says so: no such pid, another process under it, or a zombie. Unreadable is unknown. */
export function processState(id: ProcessIdentity): ProcessState {
  let text: string;
  try {
    text = readProcFile(`/proc/${id.pid}/stat`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ESRCH' ? 'gone' : 'unknown';
  }
  const stat = parseProcStat(text);
  if (stat === null) return 'unknown';
  return stat.start === id.start && isLive(stat) ? 'alive' : 'gone';
}
