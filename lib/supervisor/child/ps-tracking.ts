/**
 * The portable source while the run lives: one `ps` table at a time, the next asked for PS_TRACK_GAP_MS after
 * the previous one came, folded into the run's tracker (ps-tracker.ts). The read offers to wait up to
 * PS_TRACK_INTERVAL_MS for a ps the server shares with its other runs' reads; every run asks again the same gap
 * after the same answer, so runs tracked together share one ps per round, and a run alone gets a table about
 * every 4 s (the gap, the wait, the ps). Rare tables cost honesty nothing where orphans go to pid 1: a process that got away between two of
 * them is an unattributed orphan at the end, and the run is not confirmed while it lives.
 */
import type { PsTableResult } from '../../process/ps-table.ts';
import { readGuarded } from './ps-ladder.ts';
import type { PsRunTracker } from './ps-tracker.ts';

/**
 * How long a tracking read offers to wait for the server's shared ps (one full procps `ps` costs ~50 ms of CPU
 * at 600 processes, ~130 ms at 1,600).
 */
export const PS_TRACK_INTERVAL_MS = 3000;
/** After a table came, this long before the next read asks. */
export const PS_TRACK_GAP_MS = 1000;
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

/** Stops tracking (callable as is); `now` reads one table at once, folded in, and resolves when it is. */
export type PsTracking = (() => void) & { readonly now: () => Promise<void> };

/**
 * Starts tracking; returns the function that stops it (also called by itself once idle and empty, or cleaning).
 * `now` serves a moment the native is about to end by itself (its stdin about to close): what it started is
 * seen as its own before it can be re-parented.
 */
export function startPsTracking(
  tracker: PsRunTracker,
  readTable: (waitMs: number) => Promise<PsTableResult>,
  host: PsTrackingHost,
): PsTracking {
  let emptyTables = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const stop = (): void => {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  // The newest read: it alone schedules the next (a `now` read may overlap a timed one; the server answers
  // both from one ps, and an older table never drops a tracked process: ps-tracker.ts).
  let latest: Promise<void> | null = null;
  const read = (waitMs: number): Promise<void> => {
    timer = null;
    if (stopped || host.cleaning()) return Promise.resolve();
    const pending: Promise<void> = readGuarded(() => readTable(waitMs)).then((result) => {
      const isLatest = latest === pending;
      if (isLatest) {
        latest = null;
        host.reading(null);
      }
      if (stopped || host.cleaning()) return;
      tracker.observe(result);
      if (!isLatest) return;
      const empty = host.idle() && tracker.lastComplete() && tracker.remaining().length === 0;
      emptyTables = empty ? emptyTables + 1 : 0;
      if (emptyTables >= PS_IDLE_EMPTY_TABLES) stop();
      else timer = setTimeout(read, PS_TRACK_GAP_MS, PS_TRACK_INTERVAL_MS);
    });
    latest = pending;
    host.reading(pending);
    return pending;
  };
  timer = setTimeout(read, PS_TRACK_GAP_MS, PS_TRACK_INTERVAL_MS);
  // At once, waiting for no shared ps and for no read under way.
  const now = (): Promise<void> => {
    if (timer !== null) clearTimeout(timer);
    return read(0);
  };
  return Object.assign(stop, { now });
}
