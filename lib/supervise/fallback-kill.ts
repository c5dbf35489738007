/**
 * Best-effort cleanup when the supervisor died without a cleanup report (e.g. it was SIGKILLed).
 * It kills the native process (verified by start time), whatever is left in the supervisor's session or
 * group and started no earlier than the supervisor, and every descendant of either that can still be
 * traced by ppid (a child in its own session, like the Bash tool, while its parent lives). Descendants
 * already reparented away are out of reach here; the outcome stays "unconfirmed" whatever this manages.
 */
import type { ProcessIdentity } from './protocol.ts';
import { collectDescendants, compareStart, identityOf, isLive, type ProcStat } from '../supervisor/proc-stat.ts';
import { readProcTable } from '../supervisor/proc-table.ts';
import { signalIdentity } from '../supervisor/kill.ts';

/** Returns how many processes were sent SIGKILL. */
export function killLeftovers(supervisor: ProcessIdentity | null, native: ProcessIdentity | null): number {
  const table = supervisor || native ? readProcTable() : [];
  const victims = new Map<number, ProcStat>();
  // One snapshot first, then signals: killing the native first would reparent its children out of reach.
  for (const stat of collectDescendants(table, [supervisor, native].filter((id): id is ProcessIdentity => id !== null))) victims.set(stat.pid, stat);
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
  let killed = 0;
  if (native && signalIdentity(native, 'SIGKILL') === 'sent') killed++;
  for (const stat of victims.values()) {
    if (!isLive(stat) || (native && stat.pid === native.pid)) continue;
    if (signalIdentity(identityOf(stat), 'SIGKILL') === 'sent') killed++;
  }
  return killed;
}
