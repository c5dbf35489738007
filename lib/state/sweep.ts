/**
 * Which files of the state directory go: the plan is pure, the store (store.ts) looks and removes. Only
 * regular files of this user named as this product names them are ever candidates; anything else is reported
 * and left alone.
 */
import { entryKind } from './paths.ts';

/** Records kept, at most; passing it removes the oldest until RECORDS_AFTER_SWEEP remain (amortised: one sweep per 64 writes). */
export const MAX_RECORDS = 256;
export const RECORDS_AFTER_SWEEP = 192;
/** A record older than this (by its last write) goes: a week covers a weekend away from a background run. */
export const MAX_RECORD_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** A temp file older than this was left by a writer that died between create and rename. */
export const MAX_TEMP_AGE_MS = 60 * 1000;

/** One entry as the store saw it (lstat, never followed). */
export interface SeenEntry {
  readonly name: string;
  /** A regular file (not a symlink, directory, socket…). */
  readonly regular: boolean;
  /** Owned by this process's user. */
  readonly own: boolean;
  readonly mtimeMs: number;
}

export interface SweepPlan {
  /** Names to remove, oldest first. */
  readonly remove: readonly string[];
  /** Entries left alone and why: not this product's name, not a regular file, another owner. */
  readonly ignored: readonly { readonly name: string; readonly reason: 'foreign_name' | 'not_a_file' | 'foreign_owner' }[];
  /** Records that stay. */
  readonly kept: number;
}

/** The plan for `entries` at `nowMs`, keeping at most `keep` records (MAX_RECORDS at start, RECORDS_AFTER_SWEEP when over). */
export function planSweep(entries: readonly SeenEntry[], nowMs: number, keep: number = MAX_RECORDS): SweepPlan {
  const remove: string[] = [];
  const ignored: SweepPlan['ignored'][number][] = [];
  const records: SeenEntry[] = [];
  for (const entry of entries) {
    const kind = entryKind(entry.name).kind;
    if (kind === 'foreign') ignored.push({ name: entry.name, reason: 'foreign_name' });
    else if (!entry.own) ignored.push({ name: entry.name, reason: 'foreign_owner' });
    else if (!entry.regular) ignored.push({ name: entry.name, reason: 'not_a_file' });
    else if (kind === 'temp') {
      if (nowMs - entry.mtimeMs > MAX_TEMP_AGE_MS) remove.push(entry.name);
    } else if (nowMs - entry.mtimeMs > MAX_RECORD_AGE_MS) remove.push(entry.name);
    else records.push(entry);
  }
  // Newest first; ties by name so the plan does not depend on the directory's order.
  records.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.name < b.name ? -1 : 1));
  const over = records.slice(keep);
  remove.push(...over.reverse().map((entry) => entry.name));
  return { remove, ignored, kept: records.length - over.length };
}
