/** Signal delivery that never reaches a recycled pid and reports ESRCH as "already gone". */
import type { ProcessIdentity } from './proc-stat.ts';
import { isLive, isSameProcess } from './proc-stat.ts';
import { readProcStat } from './proc-table.ts';

export type KillSignal = Parameters<typeof process.kill>[1] & string;
export type SignalOutcome = 'sent' | 'gone' | 'failed';

/**
 * Signals `id` only if /proc still shows the same pid with the same start time and it is not a zombie.
 * (The check-then-kill window is microseconds; a pid would have to be recycled inside it.)
 */
export function signalIdentity(id: ProcessIdentity, signal: KillSignal): SignalOutcome {
  const stat = readProcStat(id.pid);
  if (!isSameProcess(id, stat) || stat === null || !isLive(stat)) return 'gone';
  return sendSignal(id.pid, signal);
}

/** Signals a whole group; callers guarantee the group id is pinned by a live member they own. */
export function signalGroup(pgid: number, signal: KillSignal): SignalOutcome {
  return sendSignal(-pgid, signal);
}

function sendSignal(target: number, signal: KillSignal): SignalOutcome {
  try {
    process.kill(target, signal);
    return 'sent';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH' ? 'gone' : 'failed';
  }
}
