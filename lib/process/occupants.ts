/**
 * Who is in a directory, and whether a bare pid still names a process: read from /proc for a removal that must
 * never pull a directory from under a process it does not own. Reading only; nothing is signalled.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { ownPidSpace, readProcFile } from './proc-table.ts';

export interface DirOccupants {
  /** Processes whose cwd matched. */
  readonly pids: number[];
  /** Processes whose cwd could not be read (another user's, without the right to look): reported, not known. */
  readonly unreadable: number;
}

/**
 * What /proc says of a bare pid (a lock names no start time, and may come from another pid namespace):
 * `lives` when any process this /proc shows has that pid at any pid-namespace level, whatever its state (a
 * zombie or a recycled pid included); `gone` only when none has; `unprovable` when /proc hides processes, or
 * when this process is not in the initial pid namespace (a lock written from an ancestor namespace, as the
 * host's Claude Code writes it for a container's bind-mounted repository, names a pid no /proc here shows).
 */
export type PidPresence = 'lives' | 'gone' | 'unprovable';

/** The kernel's fixed inode of the initial pid namespace (PROC_PID_INIT_INO): no namespace is above it. */
export const INITIAL_PID_NAMESPACE = '4026531836';

/** The pids of one process at each pid-namespace level /proc/<pid>/status lists (`NSpid:`); [] when absent. */
export function parseNsPids(status: string): number[] {
  const line = /^NSpid:\s*(.*)$/m.exec(status)?.[1];
  return line === undefined
    ? []
    : line
        .split(/\s+/)
        .filter((field) => /^\d+$/.test(field))
        .map(Number);
}

/** Whether the /proc mount in this mountinfo hides other users' processes (hidepid other than 0/off). */
export function procHidesProcesses(mountinfo: string): boolean {
  for (const line of mountinfo.split('\n')) {
    const [mount, fs] = line.split(' - ');
    if (mount?.split(' ')[4] !== '/proc' || fs?.split(' ')[0] !== 'proc') continue;
    const hidepid = /(?:^|,)hidepid=([^,\s]+)/.exec(fs.split(' ')[2] ?? '')?.[1];
    if (hidepid !== undefined && hidepid !== '0' && hidepid !== 'off') return true;
  }
  return false;
}

function listPids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** Every process whose cwd (as the kernel spells it: real, absolute) `matches`. */
export function processesWithCwd(matches: (cwd: string) => boolean): DirOccupants {
  const pids: number[] = [];
  let unreadable = 0;
  for (const pid of listPids()) {
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM') unreadable += 1;
      continue; // ENOENT: gone since the listing
    }
    if (matches(cwd)) pids.push(pid);
  }
  return { pids, unreadable };
}

/**
 * The darwin path (no /proc): which process works in a directory cannot be read without another tool (lsof is
 * not assumed), so the answer is that it cannot be known; a removal is refused.
 */
export function processesWithCwdUnverifiable(): { readonly unverifiable: string } {
  return { unverifiable: 'no /proc on macOS: no process cwd can be read' };
}

/**
 * The darwin path's PidPresence: one pid space (no pid namespaces), so signal 0 answers it exactly: ESRCH is
 * `gone`, success or EPERM (another user's) `lives`; any other error is `unprovable`. Nothing is signalled.
 */
export function pidPresenceBySignal(pid: number, kill: (pid: number, signal: 0) => void = (p, s) => process.kill(p, s)): PidPresence {
  if (!Number.isSafeInteger(pid) || pid <= 0) return 'unprovable';
  try {
    kill(pid, 0);
    return 'lives';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ESRCH' ? 'gone' : code === 'EPERM' ? 'lives' : 'unprovable';
  }
}

/** See PidPresence. A process of a nested pid namespace is found by its pid there (NSpid), not only by ours. */
export function pidPresence(pid: number): PidPresence {
  if (ownPidSpace()?.pidNamespace !== INITIAL_PID_NAMESPACE) return 'unprovable';
  try {
    if (procHidesProcesses(readFileSync('/proc/self/mountinfo', 'utf8')) && process.getuid?.() !== 0) return 'unprovable';
  } catch {
    return 'unprovable';
  }
  try {
    readProcFile(`/proc/${pid}/stat`);
    return 'lives';
  } catch {
    // no process of that pid at this level: look for it one pid namespace down
  }
  let unreadable = false;
  for (const other of listPids()) {
    try {
      if (parseNsPids(readProcFile(`/proc/${other}/status`)).includes(pid)) return 'lives';
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM') unreadable = true;
    }
  }
  return unreadable ? 'unprovable' : 'gone';
}
