/** Process-table views for the fault specs: supervisors by command line, run processes by session/group. */
import { readFileSync } from 'node:fs';
import type { ProcessIdentity } from '../../lib/supervisor/protocol.ts';
import { collectDescendants, identityOf, isLive, type ProcStat } from '../../lib/process/proc-stat.ts';
import { readProcStat, readProcTable } from '../../lib/process/proc-table.ts';
import { identify, isRunning, waitFor } from '../helpers/proc.ts';

export { identify, isRunning, waitFor };

export function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

const SUPERVISOR_RE = /supervisor\/child\/main\.ts|__supervisor/;

/** Live descendants of `rootPid` (by ppid). */
export function descendantsOf(rootPid: number): ProcStat[] {
  const root = readProcStat(rootPid);
  if (root === null) return [];
  return collectDescendants(readProcTable(), [identityOf(root)]).filter(isLive);
}

/** Live supervisors below `rootPid`. */
export function supervisorsOf(rootPid: number): ProcessIdentity[] {
  return descendantsOf(rootPid)
    .filter((s) => SUPERVISOR_RE.test(cmdlineOf(s.pid)))
    .map(identityOf);
}

/** Live processes whose session or group a supervisor named (its pid leads both). */
export function runMembers(supervisorPids: readonly number[]): ProcStat[] {
  const owners = new Set(supervisorPids);
  return readProcTable().filter((s) => isLive(s) && (owners.has(s.sid) || owners.has(s.pgid)));
}

/** Waits until none of `ids` runs and nothing is left in the supervisors' sessions or groups. */
export async function waitForNoOrphans(
  ids: readonly ProcessIdentity[],
  supervisorPids: readonly number[],
  timeoutMs = 10_000,
): Promise<void> {
  await waitFor('run processes gone', () => ids.every((id) => !isRunning(id)) && runMembers(supervisorPids).length === 0, timeoutMs).catch(
    () => {
      const left = [...ids.filter(isRunning).map((id) => id.pid), ...runMembers(supervisorPids).map((s) => s.pid)];
      throw new Error(
        `still alive after ${timeoutMs} ms: ${[...new Set(left)].map((pid) => `${pid} (${cmdlineOf(pid).slice(0, 80)})`).join(', ')}`,
      );
    },
  );
}

/** SIGKILLs whatever of `ids` still runs (test cleanup, so a failing spec leaks nothing). */
export function killAll(ids: readonly (ProcessIdentity | null)[]): void {
  for (const id of ids) {
    if (id && isRunning(id)) {
      try {
        process.kill(id.pid, 'SIGKILL');
      } catch {
        /* gone meanwhile */
      }
    }
  }
}
