/**
 * Pure reading of where this process sits in the cgroup v2 (unified) hierarchy, and the names of the
 * cgroups this project creates. Effects live in cgroup.ts.
 */
import type { ProcessIdentity } from './proc-stat.ts';

export interface Cgroup2Mount {
  /** Where the unified hierarchy is mounted (e.g. /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid layout). */
  readonly mountPoint: string;
  /** The cgroup path the mount shows at its mount point ("/" unless a namespace or bind mount narrows it). */
  readonly root: string;
  readonly readOnly: boolean;
}

/** The first cgroup2 mount of a /proc/<pid>/mountinfo text; null when the unified hierarchy is not mounted. */
export function parseCgroup2Mount(mountinfo: string): Cgroup2Mount | null {
  for (const line of mountinfo.split('\n')) {
    // Fields: id parent major:minor root mount-point options [optional fields...] - fstype source super-options
    const dash = line.indexOf(' - ');
    if (dash < 0) continue;
    const after = line.slice(dash + 3).split(' ');
    if (after[0] !== 'cgroup2') continue;
    const before = line.slice(0, dash).split(' ');
    const root = before[3];
    const mountPoint = before[4];
    const options = before[5];
    if (root === undefined || mountPoint === undefined || options === undefined) continue;
    return { mountPoint: unescapeMountField(mountPoint), root: unescapeMountField(root), readOnly: options.split(',').includes('ro') };
  }
  return null;
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

/** Every cgroup this project creates is named after the live process that owns it. */
export const CGROUP_NAME_PREFIX = 'claude-run-mcp-';
const NAME_PATTERN = /^claude-run-mcp-(\d+)-(\d+)$/;

/** The name of the cgroup owned by `owner`: a run's supervisor, or a server probing whether it can create one. */
export function cgroupName(owner: ProcessIdentity): string {
  return `${CGROUP_NAME_PREFIX}${owner.pid}-${owner.start}`;
}

/** The owner a cgroup name encodes; null for any other name (never ours to touch). */
export function cgroupOwner(name: string): ProcessIdentity | null {
  const match = NAME_PATTERN.exec(name);
  if (match === null) return null;
  const pid = Number(match[1]);
  return Number.isSafeInteger(pid) && pid > 0 ? { pid, start: match[2] as string } : null;
}
