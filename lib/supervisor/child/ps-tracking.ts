/**
 * The portable source while the run lives: one `ps` table every PS_TRACK_INTERVAL_MS, at most one at a time,
 * folded into the run's tracker (ps-tracker.ts). Rare tables cost honesty nothing: a process that got away
 * between two of them is an unattributed orphan at the end, and the run is not confirmed while it lives.
 */
import type { PsTableResult } from '../../process/ps-table.ts';
import { readGuarded } from './ps-ladder.ts';
import type { PsRunTracker } from './ps-tracker.ts';

/** How often a table is read while the run lives (one full procps `ps` costs ~50 ms of CPU at 600 processes). */
export const PS_TRACK_INTERVAL_MS = 2000;
/** Between probes and the run, tracking stops once this many tables in a row showed nothing tracked. */
export const PS_IDLE_EMPTY_TABLES = 2;

export interface PsTrackingHost {
  /** Cleanup began: the ladder reads its own tables, in order; a table read meanwhile is dropped. */
  cleaning(): boolean;
  /** Nothing runs (no probe, no native yet): tracking may stop once nothing tracked is left. */
  idle(): boolean;
  /** The table being read now (null once it is in): the ladder waits for it before its own. */
  reading(pending: Promise<void> | null): void;
}

/** Starts tracking; returns the function that stops it (also called by itself once idle and empty). */
export function startPsTracking(tracker: PsRunTracker, readTable: () => Promise<PsTableResult>, host: PsTrackingHost): () => void {
  let emptyTables = 0;
  let pending: Promise<void> | null = null;
  const interval = setInterval(() => {
    if (host.cleaning() || pending !== null) return;
    pending = readGuarded(readTable).then((result) => {
      pending = null;
      host.reading(null);
      if (host.cleaning()) return;
      tracker.observe(result);
      const empty = host.idle() && tracker.lastComplete() && tracker.remaining().length === 0;
      emptyTables = empty ? emptyTables + 1 : 0;
      if (emptyTables >= PS_IDLE_EMPTY_TABLES) stop();
    });
    host.reading(pending);
  }, PS_TRACK_INTERVAL_MS);
  const stop = (): void => {
    clearInterval(interval);
  };
  return stop;
}
