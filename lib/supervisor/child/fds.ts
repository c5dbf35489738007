/**
 * Descriptor hygiene for the supervisor process.
 * libuv's spawn passes through every inherited descriptor that lacks O_CLOEXEC (only the ones Node itself
 * opens are marked), so a descriptor leaked into the adapter would reach the native CLI. Everything Node
 * opens carries O_CLOEXEC; an fd above 2 without it was inherited, and the supervisor closes it.
 */
import { closeSync, createWriteStream, fstatSync, openSync, readdirSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { readProcFile } from '../../process/proc-table.ts';

const O_CLOEXEC = 0o2000000;

/** Pure: whether an fdinfo text says close-on-exec. Unknown formats count as "keep" (not inherited). */
export function isCloseOnExec(fdinfo: string): boolean {
  const match = /^flags:\s*([0-7]+)$/m.exec(fdinfo);
  return match === null || (parseInt(match[1] ?? '0', 8) & O_CLOEXEC) !== 0;
}

/** Closes inherited descriptors above 2; returns how many were closed. */
export function closeInheritedFds(): number {
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
