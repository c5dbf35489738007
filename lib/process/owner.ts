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
  /** The boot: the first BOOT_TAG_HEX hex digits of /proc/sys/kernel/random/boot_id (dashes dropped). */
  readonly boot: string;
}

/**
 * 64 bits of the random boot id tell two boots apart as well as all 128 (a clash is a 1 in 2^64 chance), and
 * keep names short: an owner is part of a Unix socket's path, which may not pass 107 bytes (macOS: 103).
 */
export const BOOT_TAG_HEX = 16;

/** One process on this machine: pid + start time (field 22 of its stat) within its pid space. */
export interface OwnerIdentity extends ProcessIdentity, PidSpace {}

/** The pid space of a /proc/<pid>/ns/pid link (`pid:[4026531836]`) and a boot_id text; null when malformed. */
export function parsePidSpace(nsLink: string, bootId: string): PidSpace | null {
  const ns = /^pid:\[(\d{1,20})\]$/.exec(nsLink);
  const boot = bootId.trim().toLowerCase().replaceAll('-', '');
  return ns === null || !/^[0-9a-f]{32}$/.test(boot) ? null : { pidNamespace: ns[1]!, boot: boot.slice(0, BOOT_TAG_HEX) };
}

/**
 * The one rendering of an owner in names: `<namespace>.<pid>.<start>.<boot>`, the three numbers in base 36
 * (lower-case digits and letters, no leading zero), the boot as its hex tag.
 */
export function formatOwner(owner: OwnerIdentity): string {
  const b36 = (decimal: string | number): string => BigInt(decimal).toString(36);
  return `${b36(owner.pidNamespace)}.${b36(owner.pid)}.${b36(owner.start)}.${owner.boot}`;
}

/** Length bounds keep every part exact: a namespace inode and a start time fit in 13 base-36 digits, a pid in 7. */
const OWNER_PATTERN = new RegExp(`^([0-9a-z]{1,13})\\.([0-9a-z]{1,7})\\.([0-9a-z]{1,13})\\.([0-9a-f]{${BOOT_TAG_HEX}})$`);

/** The decimal text of a canonical base-36 number (no leading zero); null for anything else. */
function fromBase36(text: string): string | null {
  if (text.length > 1 && text.startsWith('0')) return null;
  let value = 0n;
  for (const ch of text) value = value * 36n + BigInt(parseInt(ch, 36));
  return value.toString(10);
}

/** The owner `formatOwner` rendered as `text`; null for anything else. */
export function parseOwner(text: string): OwnerIdentity | null {
  const match = OWNER_PATTERN.exec(text);
  if (match === null) return null;
  const [pidNamespace, pidText, start] = [fromBase36(match[1]!), fromBase36(match[2]!), fromBase36(match[3]!)];
  if (pidNamespace === null || pidText === null || start === null) return null;
  const pid = Number(pidText);
  return Number.isSafeInteger(pid) && pid > 0 ? { pidNamespace, pid, start, boot: match[4]! } : null;
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
