/**
 * Best-effort cleanup when the supervisor died without a cleanup report (e.g. it was SIGKILLed).
 * It kills the native process (verified by start time), whatever is left in the supervisor's session or
 * group and started no earlier than the supervisor, every descendant of either that can still be traced by
 * ppid, and every process started since the supervisor that carries the run's marker in its environment
 * (which finds the orphans a dead parent left behind). The outcome stays "unconfirmed" whatever this
 * manages: the supervisor's tracking record died with it.
 */
import { RUN_MARKER_ENV, type ProcessIdentity } from '../protocol.ts';
import { collectDescendants, compareStart, identityOf, isLive, type ProcStat } from '../../process/proc-stat.ts';
import { environHas, readProcTable } from '../../process/proc-table.ts';
import { signalIdentity } from '../../process/kill.ts';
import { readPsTable } from '../../process/ps-source.ts';
import type { PsRow } from '../../process/ps-table.ts';

/** Returns how many processes were sent SIGKILL. */
export function killLeftovers(supervisor: ProcessIdentity | null, native: ProcessIdentity | null, marker: string | null): number {
  const table = supervisor || native ? readProcTable() : [];
  const victims = new Map<number, ProcStat>();
  // One snapshot first, then signals: killing the native first would reparent its children out of reach.
  for (const stat of collectDescendants(
    table,
    [supervisor, native].filter((id): id is ProcessIdentity => id !== null),
  ))
    victims.set(stat.pid, stat);
  // The dead supervisor's session and group ids name our processes only while its pid is not reused:
  // a live process holding that pid means the id may now lead someone else's session, so skip the sweep.
  const recycled = supervisor !== null && table.some((stat) => stat.pid === supervisor.pid);
  if (supervisor && !recycled) {
    for (const stat of table) {
      if (stat.sid !== supervisor.pid && stat.pgid !== supervisor.pid) continue;
      if (stat.pid === supervisor.pid || compareStart(stat.start, supervisor.start) < 0) continue;
      victims.set(stat.pid, stat);
    }
  }
  if (supervisor && marker !== null) {
    for (const stat of table) {
      if (victims.has(stat.pid) || !isLive(stat) || compareStart(stat.start, supervisor.start) < 0) continue;
      if (environHas(stat.pid, RUN_MARKER_ENV, marker) === true) victims.set(stat.pid, stat);
    }
  }
  let killed = 0;
  if (native && signalIdentity(native, 'SIGKILL') === 'sent') killed++;
  for (const stat of victims.values()) {
    if (!isLive(stat) || (native && stat.pid === native.pid)) continue;
    if (signalIdentity(identityOf(stat), 'SIGKILL') === 'sent') killed++;
  }
  return killed;
}

/**
 * The darwin path (no /proc, no environ): what one complete ps table lets the adapter do once the supervisor
 * died. Only the identity the supervisor reported is ended: the native, when the table shows its pid with the
 * very start the `spawned` report gave and it is not a zombie. Every other live process of the run that the
 * table links to it (the supervisor's group, descendants by parent pid of the supervisor or the native) is
 * listed in `left`, never signalled: the tracking record that proved them the run's died with the supervisor.
 */
export interface PortableFallbackPlan {
  readonly kill: ProcessIdentity | null;
  readonly left: readonly number[];
}

export function planPortableFallback(
  rows: readonly PsRow[],
  supervisorPid: number | null,
  native: ProcessIdentity | null,
): PortableFallbackPlan {
  const live = rows.filter((row) => !row.stat.startsWith('Z'));
  const nativeRow = native === null ? undefined : live.find((row) => row.pid === native.pid);
  const kill = native !== null && nativeRow?.start?.lstart === native.start ? native : null;
  const linked = new Set<number>();
  const roots = [supervisorPid, native?.pid ?? null].filter((pid): pid is number => pid !== null);
  for (let grown = true; grown;) {
    grown = false;
    for (const row of live) {
      if (linked.has(row.pid) || row.pid === supervisorPid || row.pid === kill?.pid) continue;
      if (row.pgid === supervisorPid || roots.includes(row.ppid) || linked.has(row.ppid)) {
        linked.add(row.pid);
        grown = true;
      }
    }
  }
  return { kill, left: [...linked].sort((a, b) => a - b) };
}

/** The portable fallback's effect: one ps table, then SIGKILL to the reported native only. Never throws. */
export async function endReportedNative(
  supervisorPid: number | null,
  native: ProcessIdentity | null,
  path: string,
): Promise<{ readonly killed: number; readonly left: number; readonly error: string | null }> {
  const table = await readPsTable({ path });
  if (table.kind !== 'table') return { killed: 0, left: 0, error: table.message };
  const plan = planPortableFallback(table.rows, supervisorPid, native);
  let killed = 0;
  if (plan.kill !== null) {
    try {
      process.kill(plan.kill.pid, 'SIGKILL');
      killed = 1;
    } catch {
      // ESRCH: gone since the table; EPERM: not ours to end
    }
  }
  return { killed, left: plan.left.length, error: null };
}
