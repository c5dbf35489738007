/**
 * Which paths a traced system call names (pure): the path arguments of each file call, resolved against the
 * directory strace's `-y` printed for its descriptor argument, or the process's working directory.
 */
import { posix } from 'node:path';
import { readFd, readString, type Syscall } from './strace.ts';

/** The syscalls whose arguments name paths: [dirfd index or null, path index] pairs. */
const PATH_ARGS: Readonly<Record<string, readonly (readonly [number | null, number])[]>> = {
  open: [[null, 0]],
  creat: [[null, 0]],
  openat: [[0, 1]],
  openat2: [[0, 1]],
  newfstatat: [[0, 1]],
  fstatat64: [[0, 1]],
  statx: [[0, 1]],
  faccessat: [[0, 1]],
  faccessat2: [[0, 1]],
  readlinkat: [[0, 1]],
  mkdirat: [[0, 1]],
  mknodat: [[0, 1]],
  unlinkat: [[0, 1]],
  fchmodat: [[0, 1]],
  fchownat: [[0, 1]],
  utimensat: [[0, 1]],
  futimesat: [[0, 1]],
  name_to_handle_at: [[0, 1]],
  execveat: [[0, 1]],
  inotify_add_watch: [[null, 1]],
  fanotify_mark: [[3, 4]],
  renameat: [
    [0, 1],
    [2, 3],
  ],
  renameat2: [
    [0, 1],
    [2, 3],
  ],
  linkat: [
    [0, 1],
    [2, 3],
  ],
  symlinkat: [
    [null, 0],
    [1, 2],
  ],
  rename: [
    [null, 0],
    [null, 1],
  ],
  link: [
    [null, 0],
    [null, 1],
  ],
  symlink: [
    [null, 0],
    [null, 1],
  ],
  mount: [
    [null, 0],
    [null, 1],
  ],
  pivot_root: [
    [null, 0],
    [null, 1],
  ],
};

/**
 * The absolute paths a call names (a symlink's target too: making a link to /proc is a use of it), and the
 * process's working directory after it (`cwd`: what -y last showed for AT_FDCWD, null until then). A relative
 * path whose directory is unknown comes back as `(unknown directory)/<path>`.
 */
export function callPaths(call: Syscall, cwd: string | null): { readonly paths: string[]; readonly cwd: string | null } {
  const positions = PATH_ARGS[call.name] ?? (call.name === 'getcwd' ? [] : [[null, 0] as const]);
  const paths: string[] = [];
  for (const [dirIndex, pathIndex] of positions) {
    const text = readString(call.args[pathIndex] ?? '')?.value;
    if (text === undefined || text === '') continue;
    const dir = dirIndex === null ? null : readFd(call.args[dirIndex] ?? '');
    // -y names AT_FDCWD's directory: the process's cwd, kept for the calls that take no dirfd.
    if (dir?.fd === 'AT_FDCWD' && dir.path !== null) cwd = dir.path;
    const base = dir === null || dir.fd === 'AT_FDCWD' ? (dir?.path ?? cwd) : dir.path;
    if (text.startsWith('/')) paths.push(posix.normalize(text));
    else paths.push(base === null ? `(unknown directory)/${text}` : posix.join(base, text));
  }
  return { paths, cwd };
}
