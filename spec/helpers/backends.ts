/**
 * The cleanup backends, for specs that prove a behaviour under each: a cgroup per run, and /proc tracking
 * (BACKENDS); the portable source (`ps` tables and signals only) is PS_SCAN_BACKEND, run by its own files.
 */
import assert from 'node:assert/strict';
import { cleanupBackendFor, type CleanupBackend } from '../../lib/supervisor/parent/cleanup-backend.ts';

export const PROCESS_SCAN: CleanupBackend = { kind: 'process_scan', reason: 'forced_off', detail: 'chosen by the spec' };

export interface NamedBackend {
  readonly name: 'cgroup' | 'process_scan' | 'ps_scan';
  /** The backend itself; resolved when first asked, so a machine without cgroups fails the cgroup tests, not the file. */
  cleanup(): CleanupBackend;
  /** The server and library option that selects it. */
  readonly option: 'cgroup' | 'process_scan' | 'ps_scan';
}

export const PS_SCAN: CleanupBackend = { kind: 'ps_scan', reason: 'forced_off', detail: 'chosen by the spec' };
export const PS_SCAN_BACKEND: NamedBackend = { name: 'ps_scan', cleanup: () => PS_SCAN, option: 'ps_scan' };

export const BACKENDS: readonly NamedBackend[] = [
  { name: 'cgroup', cleanup: () => cleanupBackendFor('cgroup'), option: 'cgroup' },
  { name: 'process_scan', cleanup: () => PROCESS_SCAN, option: 'process_scan' },
];

/**
 * The one reason the /proc fallback may leave a run unproven on a machine where other jobs start and end
 * processes all the time (its scans then keep listing processes that are gone before they are read): it says so.
 * Nothing else excuses a missing proof, and the cgroup backend never needs the excuse.
 */
export const HONEST_SCAN_MISS = /no two consecutive scans could show the run gone/;

/** Cleanup confirmed, or (process_scan only) honestly unproven for the one reason above; the run's error follows. */
export function assertProvenOrHonest(result: Record<string, unknown> | null | undefined, backend: NamedBackend['name']): void {
  if (result?.['cleanup_confirmed'] === true) return;
  const error = result?.['cleanup_error'];
  assert.equal(backend, 'process_scan', `unconfirmed under ${backend}: ${JSON.stringify(error)}`);
  assert.match(JSON.stringify(error), HONEST_SCAN_MISS);
}
