/**
 * Best-effort cleanup when the supervisor died without a cleanup report (e.g. it was SIGKILLed).
 * It kills the native process (verified by start time) and whatever is left in the supervisor's session
 * or group and started no earlier than the supervisor. Descendants that had left the session are out of
 * reach here; the outcome stays "unconfirmed" whatever this manages.
 */
import type { ProcessIdentity } from './protocol.ts';
import { compareStart, identityOf, isLive } from '../supervisor/proc-stat.ts';
import { readProcTable } from '../supervisor/proc-table.ts';
import { signalIdentity } from '../supervisor/kill.ts';

/** Returns how many processes were sent SIGKILL. */
export function killLeftovers(supervisor: ProcessIdentity | null, native: ProcessIdentity | null): number {
  let killed = 0;
  if (native && signalIdentity(native, 'SIGKILL') === 'sent') killed++;
  if (!supervisor) return killed;
  for (const stat of readProcTable()) {
    if (!isLive(stat) || (native && stat.pid === native.pid)) continue;
    if (stat.sid !== supervisor.pid && stat.pgid !== supervisor.pid) continue;
    if (compareStart(stat.start, supervisor.start) < 0) continue;
    if (signalIdentity(identityOf(stat), 'SIGKILL') === 'sent') killed++;
  }
  return killed;
}
