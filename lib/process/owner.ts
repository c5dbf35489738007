/**
 * Who owns what this project leaves on the machine (a run's cgroup, a broker's private directory), and when
 * that owner is provably gone. A pid names a process only within its pid namespace, and only for one boot of
 * one kernel: the owner is pid + start time within a pid space (namespace and boot). Pure: the reads of /proc
 * that fill these in are in proc-table.ts.
 */
import type { ProcessIdentity } from './proc-stat.ts';

/** Where a pid means one process: a pid namespace (the inode of /proc/<pid>/ns/pid) of one boot. */
export interface PidSpace {
  /** Decimal inode number of the pid namespace. */
  readonly pidNamespace: string;
  /** /proc/sys/kernel/random/boot_id without its dashes: 32 lowercase hex digits. */
  readonly boot: string;
}

/** One process on this machine: pid + start time (field 22 of its stat) within its pid space. */
export interface OwnerIdentity extends ProcessIdentity, PidSpace {}

/** The pid space of a /proc/<pid>/ns/pid link (`pid:[4026531836]`) and a boot_id text; null when malformed. */
export function parsePidSpace(nsLink: string, bootId: string): PidSpace | null {
  const ns = /^pid:\[(\d{1,20})\]$/.exec(nsLink);
  const boot = bootId.trim().toLowerCase().replaceAll('-', '');
  return ns === null || !/^[0-9a-f]{32}$/.test(boot) ? null : { pidNamespace: ns[1]!, boot };
}

/** The one rendering of an owner in names: `<namespace>.<pid>.<start>.<boot>` (digits, dots and hex only). */
export function formatOwner(owner: OwnerIdentity): string {
  return `${owner.pidNamespace}.${owner.pid}.${owner.start}.${owner.boot}`;
}

/** Length bounds keep every part exact: a namespace inode and a start time fit in 20 digits, a pid in 10. */
const OWNER_PATTERN = /^(\d{1,20})\.(\d{1,10})\.(\d{1,20})\.([0-9a-f]{32})$/;

/** The owner `formatOwner` rendered as `text`; null for anything else. */
export function parseOwner(text: string): OwnerIdentity | null {
  const match = OWNER_PATTERN.exec(text);
  if (match === null) return null;
  const pid = Number(match[2]);
  return Number.isSafeInteger(pid) && pid > 0 ? { pidNamespace: match[1]!, pid, start: match[3]!, boot: match[4]! } : null;
}

/** What /proc says of a process identity: `unknown` when it cannot say (a read refused, a line unparsable). */
export type ProcessState = 'alive' | 'gone' | 'unknown';

/**
 * What a sweep may do about `owner`: `dead` only when the owner lived in the sweeper's own pid space and /proc
 * there says that pid is gone, reused by another process, or a zombie. `foreign` (another namespace or boot:
 * its pids cannot be looked at from here), `unknown` and `self` are never acted on.
 */
export type OwnerVerdict = 'dead' | 'alive' | 'self' | 'foreign' | 'unknown';

export function judgeOwner(
  owner: OwnerIdentity,
  here: PidSpace,
  self: ProcessIdentity | null,
  state: (id: ProcessIdentity) => ProcessState,
): OwnerVerdict {
  if (owner.pidNamespace !== here.pidNamespace || owner.boot !== here.boot) return 'foreign';
  if (self !== null && owner.pid === self.pid && owner.start === self.start) return 'self';
  const now = state({ pid: owner.pid, start: owner.start });
  return now === 'gone' ? 'dead' : now;
}
