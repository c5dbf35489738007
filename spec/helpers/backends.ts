/** Both cleanup backends, for specs that prove a behaviour under each: a cgroup per run, and /proc tracking. */
import { cleanupBackendFor, type CleanupBackend } from '../../lib/supervisor/parent/cleanup-backend.ts';

export const PROCESS_SCAN: CleanupBackend = { kind: 'process_scan', reason: 'forced_off', detail: 'chosen by the spec' };

export interface NamedBackend {
  readonly name: 'cgroup' | 'process_scan';
  /** The backend itself; resolved when first asked, so a machine without cgroups fails the cgroup tests, not the file. */
  cleanup(): CleanupBackend;
  /** The server and library option that selects it. */
  readonly option: 'cgroup' | 'process_scan';
}

export const BACKENDS: readonly NamedBackend[] = [
  { name: 'cgroup', cleanup: () => cleanupBackendFor('cgroup'), option: 'cgroup' },
  { name: 'process_scan', cleanup: () => PROCESS_SCAN, option: 'process_scan' },
];
