/**
 * Remembers every process that belonged to the run: members of the supervisor's process group and,
 * by walking ppid links, descendants that left the group (the native Bash tool runs in its own session).
 * Identities are kept after reparenting to init, so orphans are still ended; a recycled pid never matches.
 */
import type { ProcessIdentity } from '../supervise/protocol.ts';
import { collectDescendants, groupMembers, identityKey, identityOf, isLive, type ProcStat } from './proc-stat.ts';

export interface RunTracker {
  /** Folds one process-table snapshot into the tracked set. */
  observe(table: readonly ProcStat[]): void;
  /** Processes of the run still alive in `table` (the supervisor itself excluded), sorted by pid. */
  remaining(table: readonly ProcStat[]): ProcStat[];
  trackedCount(): number;
  /** True once a process could not be remembered because the cap was reached: cleanup is then unprovable. */
  overflowed(): boolean;
}

/** Tracked identities are capped so a fork bomb cannot grow the supervisor without bound. */
export const MAX_TRACKED_PROCESSES = 4096;

export function createRunTracker(options: { readonly selfPid: number; readonly groupMode: boolean; readonly roots: readonly ProcessIdentity[] }): RunTracker {
  const { selfPid, groupMode } = options;
  const tracked = new Map<string, ProcessIdentity>();
  let overflow = false;
  const remember = (stat: ProcStat): void => {
    if (stat.pid === selfPid) return;
    const key = identityKey(stat);
    if (tracked.has(key)) return;
    if (tracked.size >= MAX_TRACKED_PROCESSES) {
      overflow = true;
      return;
    }
    tracked.set(key, identityOf(stat));
  };
  for (const root of options.roots) tracked.set(identityKey(root), root);

  return {
    observe(table) {
      const live = table.filter(isLive);
      if (groupMode) for (const stat of groupMembers(live, selfPid, selfPid)) remember(stat);
      for (const stat of collectDescendants(live, [...tracked.values()])) remember(stat);
    },
    remaining(table) {
      const out = new Map<number, ProcStat>();
      for (const stat of table) {
        if (stat.pid === selfPid || !isLive(stat)) continue;
        if ((groupMode && stat.pgid === selfPid) || tracked.has(identityKey(stat))) out.set(stat.pid, stat);
      }
      return [...out.values()].sort((a, b) => a.pid - b.pid);
    },
    trackedCount: () => tracked.size,
    overflowed: () => overflow,
  };
}
