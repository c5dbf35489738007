/**
 * Pure reading of where this process sits in the cgroup v2 (unified) hierarchy, and the names of the
 * cgroups this project creates. Effects live in cgroup.ts.
 */
import { formatOwner, judgeOwner, parseOwner, type OwnerIdentity, type PidSpace, type ProcessState } from './owner.ts';
import type { ProcessIdentity } from './proc-stat.ts';

export interface Cgroup2Mount {
  /** Where the unified hierarchy is mounted (e.g. /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid layout). */
  readonly mountPoint: string;
  /** The cgroup path the mount shows at its mount point ("/" unless a namespace or bind mount narrows it). */
  readonly root: string;
  readonly readOnly: boolean;
}

/** One line of /proc/<pid>/mountinfo, the fields a cgroup choice needs. */
export interface MountEntry {
  readonly id: number;
  readonly parent: number;
  /** The path inside the mounted file system shown at the mount point. */
  readonly root: string;
  readonly mountPoint: string;
  readonly readOnly: boolean;
  readonly fsType: string;
}

/** Every well-formed line of a mountinfo text, in its order; malformed lines are skipped. */
export function parseMountInfo(mountinfo: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of mountinfo.split('\n')) {
    // Fields: id parent major:minor root mount-point options [optional fields...] - fstype source super-options
    const dash = line.indexOf(' - ');
    if (dash < 0) continue;
    const fsType = line.slice(dash + 3).split(' ')[0];
    const [id, parent, , root, mountPoint, options] = line.slice(0, dash).split(' ');
    if (fsType === undefined || root === undefined || mountPoint === undefined || options === undefined) continue;
    out.push({
      id: Number(id),
      parent: Number(parent),
      root: unescapeMountField(root),
      mountPoint: unescapeMountField(mountPoint),
      readOnly: options.split(',').includes('ro'),
      fsType,
    });
  }
  return out;
}

/**
 * The cgroup2 mount through which this process's cgroup `cgroupPath` can be reached: visible (no mount made
 * later at its mount point or above it, other than its own ancestors, hides it) and showing that path (its
 * root is the path or above it). A writable one before a read-only one, else the first in mount order. null
 * when no cgroup2 mount qualifies.
 */
export function parseCgroup2Mount(mountinfo: string, cgroupPath: string): Cgroup2Mount | null {
  const entries = parseMountInfo(mountinfo);
  const fit = entries
    .filter((entry, index) => entry.fsType === 'cgroup2' && visible(entries, index))
    .map((entry): Cgroup2Mount => ({ mountPoint: entry.mountPoint, root: entry.root, readOnly: entry.readOnly }))
    .filter((mount) => cgroupDirectory(mount, cgroupPath) !== null);
  return fit.find((mount) => !mount.readOnly) ?? fit[0] ?? null;
}

/** Whether any cgroup2 file system is mounted at all (visible or not): tells "none" from "none that fits". */
export function hasCgroup2Mount(mountinfo: string): boolean {
  return parseMountInfo(mountinfo).some((entry) => entry.fsType === 'cgroup2');
}

/** False when a mount listed after entries[index], not one of its ancestors, sits at its mount point or above. */
function visible(entries: readonly MountEntry[], index: number): boolean {
  const self = entries[index]!;
  const ancestors = new Set<number>();
  const byId = new Map(entries.map((entry) => [entry.id, entry]));
  for (let at = byId.get(self.parent); at !== undefined && !ancestors.has(at.id); at = byId.get(at.parent)) ancestors.add(at.id);
  return !entries.slice(index + 1).some((later) => !ancestors.has(later.id) && isAtOrAbove(later.mountPoint, self.mountPoint));
}

/** Whether directory `upper` is `path` or one of its parents. */
function isAtOrAbove(upper: string, path: string): boolean {
  if (upper === '/' || upper === path) return true;
  return path.startsWith(upper.endsWith('/') ? upper : `${upper}/`);
}

/** mountinfo escapes space, tab, newline and backslash as octal (\040 and so on). */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The unified hierarchy's path of a /proc/<pid>/cgroup text (its "0::" line); null when there is none. */
export function parseUnifiedCgroupPath(text: string): string | null {
  for (const line of text.split('\n')) {
    if (line.startsWith('0::')) {
      const path = line.slice(3);
      // " (deleted)" marks a cgroup removed under a process: nothing can be created beneath it.
      return path.startsWith('/') && !path.endsWith(' (deleted)') ? path : null;
    }
  }
  return null;
}

/** The directory of cgroup `path` under `mount`; null when the mount does not show that path. */
export function cgroupDirectory(mount: Cgroup2Mount, path: string): string | null {
  const root = mount.root === '/' ? '' : mount.root;
  if (root !== '' && path !== root && !path.startsWith(`${root}/`)) return null;
  const rest = path.slice(root.length);
  const base = mount.mountPoint.endsWith('/') ? mount.mountPoint.slice(0, -1) : mount.mountPoint;
  return rest === '' || rest === '/' ? base : `${base}${rest}`;
}

/** Every cgroup this project creates is named after the process that owns it, with the owner's pid space. */
export const CGROUP_NAME_PREFIX = 'claude-run-mcp-';
/** The name of releases that named only pid and start: whose namespace that pid was of is unknown. */
const LEGACY_NAME_PATTERN = /^claude-run-mcp-\d+-\d+$/;

/** The name of the cgroup owned by `owner`: a run's supervisor, or a server probing whether it can create one. */
export function cgroupName(owner: OwnerIdentity): string {
  return `${CGROUP_NAME_PREFIX}${formatOwner(owner)}`;
}

/** What a cgroup's name says of its owner; null for a name that is not ours (never ours to touch or report). */
export type CgroupNameOwner =
  | { readonly kind: 'owner'; readonly owner: OwnerIdentity }
  /** Ours, named by an earlier release without the pid namespace: its owner can never be proved gone. */
  | { readonly kind: 'legacy' }
  /** Our prefix, but no owner can be read from the rest. */
  | { readonly kind: 'unparsable' };

export function cgroupNameOwner(name: string): CgroupNameOwner | null {
  if (!name.startsWith(CGROUP_NAME_PREFIX)) return null;
  const owner = parseOwner(name.slice(CGROUP_NAME_PREFIX.length));
  if (owner !== null) return { kind: 'owner', owner };
  return LEGACY_NAME_PATTERN.test(name) ? { kind: 'legacy' } : { kind: 'unparsable' };
}

/** Why a cgroup of ours was left by a sweep (an owner that lives is not reported: that is its own run). */
export type CgroupKeptReason = 'foreign' | 'unknown' | 'legacy' | 'unparsable' | 'not_emptied';

export interface CgroupSweep {
  /** Names of the cgroups removed: their owners were provably dead. */
  readonly removed: string[];
  readonly kept: { readonly name: string; readonly reason: CgroupKeptReason }[];
}

/**
 * Pure: what a sweep does with each name under the base. Only a cgroup whose owner lived in `here` and is
 * gone there is ended; another namespace's or boot's owner cannot be looked at from here, and a name of an
 * earlier release does not say which namespace its pid was of. Without `here` (/proc could not say) nothing
 * can be proved: every owner is `unknown`.
 */
export function planCgroupSweep(
  names: readonly string[],
  here: PidSpace | null,
  self: ProcessIdentity | null,
  state: (id: ProcessIdentity) => ProcessState,
): { readonly dead: string[]; readonly kept: CgroupSweep['kept'] } {
  const dead: string[] = [];
  const kept: { name: string; reason: CgroupKeptReason }[] = [];
  for (const name of names) {
    const read = cgroupNameOwner(name);
    if (read === null) continue;
    if (read.kind !== 'owner') {
      kept.push({ name, reason: read.kind });
      continue;
    }
    const verdict = here === null ? 'unknown' : judgeOwner(read.owner, here, self, state);
    if (verdict === 'dead') dead.push(name);
    else if (verdict === 'foreign' || verdict === 'unknown') kept.push({ name, reason: verdict });
  }
  return { dead, kept };
}

/** One line for the operator log; null when the sweep found nothing of ours. */
export function describeCgroupSweep(sweep: CgroupSweep): string | null {
  if (sweep.removed.length === 0 && sweep.kept.length === 0) return null;
  const counts = new Map<CgroupKeptReason, number>();
  for (const { reason } of sweep.kept) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  const left = [...counts].map(([reason, n]) => `${n} ${reason}`).join(', ');
  return `cgroup sweep: removed ${sweep.removed.length} run cgroup(s) of dead owners; left ${sweep.kept.length}${left === '' ? '' : ` (${left})`}`;
}
