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
