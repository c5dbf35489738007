/** Signal delivery that never reaches a recycled pid and reports ESRCH as "already gone". */
import type { ProcessIdentity } from './proc-stat.ts';
import { isLive, isSameProcess } from './proc-stat.ts';
import { readProcStat } from './proc-table.ts';
import { isSameWeakProcess, type PsRow, type WeakProcessIdentity } from './ps-table.ts';

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

/**
 * The portable check: signals `id` only if `latest`, the newest `ps` row of that pid, still shows the same pid
 * with the same start second and not a zombie. Weak (one second, and the table may be a moment old): a pid
 * recycled within the start's second, or since the table was read, is not told apart.
 */
export function signalWeakIdentity(id: WeakProcessIdentity, latest: PsRow | undefined, signal: KillSignal): SignalOutcome {
  if (latest === undefined || !isSameWeakProcess(id, latest) || latest.stat.startsWith('Z')) return 'gone';
  return sendSignal(id.pid, signal);
}

/**
 * Whether some process has this pid now (signal 0; EPERM: one of another user). Says nothing about which
 * process: a recycled pid answers yes too, which keeps an identity on the safe side.
 */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
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
