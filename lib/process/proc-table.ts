/**
 * Reads the live Linux process table from /proc (synchronous). One scan reads one small file per process,
 * with plain open/read/close into a reused buffer: readFileSync costs about twice as much per file, and
 * the supervisor scans on every tracking tick and during cleanup.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { parseProcStat, type ProcStat } from './proc-stat.ts';

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
  try {
    return parseProcStat(readProcFile(`/proc/${pid}/stat`));
  } catch {
    return null;
  }
}

/** Every process visible in /proc; processes that vanish mid-scan are skipped. */
export function readProcTable(): ProcStat[] {
  const table: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    const code = name.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    const stat = readProcStat(Number(name));
    if (stat) table.push(stat);
  }
  return table;
}

/**
 * Whether /proc/<pid>/environ holds the exact entry `name=value`; null when reading it is refused (another
 * user's process, or one that made itself non-dumpable). A process that is gone, or a kernel thread (which
 * has no environment: the read fails with ESRCH), holds no marker. The environment a process was started
 * with is what /proc shows, and it is passed on to every child that does not replace it.
 */
export function environHas(pid: number, name: string, value: string): boolean | null {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'EACCES' || code === 'EPERM' ? null : false;
  }
  const entry = Buffer.from(`${name}=${value}\0`, 'utf8');
  for (let at = environ.indexOf(entry); at >= 0; at = environ.indexOf(entry, at + 1)) {
    if (at === 0 || environ[at - 1] === 0) return true;
  }
  return false;
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
