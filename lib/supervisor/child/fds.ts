/**
 * Descriptor hygiene for the supervisor process.
 * libuv's spawn passes through every inherited descriptor that lacks O_CLOEXEC (only the ones Node itself
 * opens are marked), so a descriptor leaked into the adapter would reach the native CLI. Everything Node
 * opens carries O_CLOEXEC; an fd above 2 without it was inherited, and the supervisor closes it. On Linux
 * /proc/self/fdinfo shows the flag. Elsewhere (and when the platform is unknown) Node offers no fcntl: the
 * portable path fstat-probes fds 3 to FD_PROBE_MAX and closes what Node never holds at this point (regular
 * files, directories, devices other than /dev/null); a leaked pipe or socket cannot be told from Node's
 * own event-loop pipes there and stays (docs/supervisor.md).
 */
import { closeSync, createWriteStream, fstatSync, openSync, readdirSync, statSync, type Stats } from 'node:fs';
import type { Writable } from 'node:stream';
import type { SupportedPlatform } from '../../process/platform.ts';
import { readProcFile } from '../../process/proc-table.ts';

const O_CLOEXEC = 0o2000000;

/** Pure: whether an fdinfo text says close-on-exec. Unknown formats count as "keep" (not inherited). */
export function isCloseOnExec(fdinfo: string): boolean {
  const match = /^flags:\s*([0-7]+)$/m.exec(fdinfo);
  return match === null || (parseInt(match[1] ?? '0', 8) & O_CLOEXEC) !== 0;
}

/** The portable path probes descriptors 3 up to (not including) this one: a leak above it stays. */
export const FD_PROBE_MAX = 1024;

/**
 * Pure: whether the portable path closes a descriptor of this kind. Node holds pipes, sockets, kqueue or
 * epoll descriptors and /dev/null of its own when the supervisor starts, never a file, directory or other
 * device; those are inherited.
 */
export function isPortablyInherited(
  st: Pick<Stats, 'isFile' | 'isDirectory' | 'isBlockDevice' | 'isCharacterDevice' | 'dev' | 'ino'>,
  devNull: { readonly dev: number; readonly ino: number } | null,
): boolean {
  if (st.isFile() || st.isDirectory() || st.isBlockDevice()) return true;
  return st.isCharacterDevice() && !(devNull !== null && st.dev === devNull.dev && st.ino === devNull.ino);
}

/** Closes inherited descriptors above 2 as the platform allows; returns how many were closed. */
export function closeInheritedFds(platform: SupportedPlatform | null): number {
  return platform === 'linux' ? closeUncloexecFds() : closeFdsPortably();
}

function closeFdsPortably(): number {
  let devNull: { dev: number; ino: number } | null = null;
  try {
    devNull = statSync('/dev/null');
  } catch {
    // no /dev/null to spare: every character device counts as inherited
  }
  let closed = 0;
  for (let fd = 3; fd < FD_PROBE_MAX; fd++) {
    try {
      if (!isPortablyInherited(fstatSync(fd), devNull)) continue;
      closeSync(fd);
      closed++;
    } catch {
      // EBADF: not open
    }
  }
  return closed;
}

function closeUncloexecFds(): number {
  let closed = 0;
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return 0;
  }
  for (const name of names) {
    const fd = Number(name);
    if (!(fd > 2)) continue;
    try {
      if (isCloseOnExec(readProcFile(`/proc/self/fdinfo/${fd}`))) continue;
      closeSync(fd);
      closed++;
    } catch {
      // Gone already (e.g. the directory handle of the readdir above).
    }
  }
  return closed;
}

/** A writable over one of our own stdio fds, async for pipes and sockets so a slow reader never blocks timers. */
export function openWritableFd(fd: number): Writable {
  const stat = fstatSync(fd);
  if (stat.isFIFO() || stat.isSocket()) return new (process.getBuiltinModule('node:net').Socket)({ fd, readable: false, writable: true });
  return createWriteStream('', { fd, autoClose: true });
}

/**
 * Gives up this process's fd 1 once the native process holds its own copy, so the adapter sees the data
 * pipe end as soon as the native side closes. /dev/null takes the slot: no later open can land on fd 1.
 */
export function releaseStdout(): void {
  try {
    closeSync(1);
  } catch {
    return;
  }
  const fd = openSync('/dev/null', 'w');
  if (fd !== 1) closeSync(fd);
}
