/**
 * A view of the process table kept current cheaply between full scans. A full scan reads every process's
 * stat; a delta reads only what can have changed for a run: the processes it tracks, and the pids the kernel
 * allocated since the last look (pids are handed out cyclically, so every process born since then is among
 * them: ns_last_pid says how far allocation went). A stranger seen before is not read again until the next
 * full scan: nothing it does can make it the run's (it cannot join the run's session; setpgid stays within
 * its own session; an orphan is re-parented to init or a subreaper, never to a run process).
 */
import type { ProcessIdentity, ProcStat } from './proc-stat.ts';
import { isProcess, lastAllocatedPid, readProcStat, scanProcTable, type ProcScan } from './proc-table.ts';

/** A delta that would read more pids than this (a fork storm, a pid wrap) is a full scan instead. */
export const DELTA_MAX_PIDS = 512;

export interface ProcDelta {
  /** The processes born since the last look and the tracked ones, as read now (zombies included). */
  readonly fresh: ProcStat[];
  /** The whole view by pid: strangers as the last full scan (or delta) saw them. */
  readonly view: ReadonlyMap<number, ProcStat>;
}

export interface ProcView {
  /** A full scan; the view is replaced by it. */
  full(): ProcScan;
  /**
   * The view brought up to date for `tracked` and every process born since the last look; null when that cannot
   * be done (ns_last_pid unreadable, a pid wrap, too many new pids): the caller scans in full instead.
   */
  delta(tracked: readonly ProcessIdentity[]): ProcDelta | null;
}

export function createProcView(): ProcView {
  let view = new Map<number, ProcStat>();
  /** Allocation had reached this pid before the last look listed or read anything. */
  let seenUpTo: number | null = null;
  /** New pids that were not readable yet: a pid is allocated a moment before its process appears in /proc. */
  let retry: number[] = [];

  const readNew = (pid: number, fresh: ProcStat[], again: number[] | null): void => {
    const stat = readProcStat(pid);
    if (stat === null) {
      again?.push(pid);
      return;
    }
    if (view.get(pid)?.start === stat.start) return;
    // A thread of a process has a pid of its own and a stat that looks like a process's.
    if (isProcess(pid) !== true) return;
    view.set(pid, stat);
    fresh.push(stat);
  };

  return {
    full() {
      seenUpTo = lastAllocatedPid();
      retry = [];
      const scan = scanProcTable();
      view = new Map(scan.table.map((stat) => [stat.pid, stat]));
      return scan;
    },
    delta(tracked) {
      const upTo = lastAllocatedPid();
      if (upTo === null || seenUpTo === null || upTo < seenUpTo || upTo - seenUpTo > DELTA_MAX_PIDS) return null;
      const again: number[] = [];
      const fresh: ProcStat[] = [];
      for (const pid of retry) readNew(pid, fresh, null);
      for (let pid = seenUpTo + 1; pid <= upTo; pid++) readNew(pid, fresh, again);
      seenUpTo = upTo;
      retry = again;
      for (const id of tracked) {
        const stat = readProcStat(id.pid);
        if (stat !== null && stat.start === id.start) {
          view.set(id.pid, stat);
          fresh.push(stat);
        } else if (view.get(id.pid)?.start === id.start) view.delete(id.pid);
      }
      return { fresh, view };
    },
  };
}
