/**
 * Reading cgroup.events, the kernel's own account of a cgroup (`populated`, `frozen`), and waiting on it: the
 * kernel signals every change of the file (inotify), and a poll beside the watch bounds a lost notification.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What cgroup.events says of `populated` (any process in the cgroup or below). `gone`: the directory no longer
 * exists, so nothing is in it. `unreadable`: it exists but says nothing readable: never to be taken for empty.
 */
export type CgroupPopulation = 'populated' | 'empty' | 'gone' | 'unreadable';

/** What cgroup.events of `dir` says now of its processes; `unreadable` is never `empty`. */
export function cgroupPopulation(dir: string): CgroupPopulation {
  const populated = readEventsField(dir, 'populated');
  return populated === 'gone' || populated === 'unreadable' ? populated : populated ? 'populated' : 'empty';
}

const EVENT_FIELDS = { populated: /^populated ([01])$/m, frozen: /^frozen ([01])$/m } as const;

/** One 0/1 field of cgroup.events. */
export function readEventsField(dir: string, field: 'populated' | 'frozen'): boolean | 'gone' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(join(dir, 'cgroup.events'), 'latin1');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(dir) ? 'gone' : 'unreadable';
  }
  const match = EVENT_FIELDS[field].exec(text);
  return match === null ? 'unreadable' : match[1] === '1';
}

/** Polls between inotify events too: a lost notification costs at most this long. */
const EVENTS_POLL_MS = 50;

/**
 * Resolves true once the cgroup holds no process (`populated 0`, or it is gone; an unreadable cgroup.events
 * never counts) and `alsoDone()` holds, false when `timeoutMs` passes first.
 */
export function waitUntilEmpty(dir: string, timeoutMs: number, alsoDone: () => boolean = () => true): Promise<boolean> {
  return waitForEvents(dir, timeoutMs, () => {
    const population = cgroupPopulation(dir);
    return (population === 'empty' || population === 'gone') && alsoDone();
  });
}

/** Resolves true once `done()` holds, false when `timeoutMs` passes first; watches cgroup.events (the kernel signals every change of it). */
export function waitForEvents(dir: string, timeoutMs: number, done: () => boolean): Promise<boolean> {
  if (done()) return Promise.resolve(true);
  return new Promise((resolve) => {
    let watcher: ReturnType<typeof import('node:fs').watch> | null = null;
    const finish = (value: boolean): void => {
      clearInterval(poll);
      clearTimeout(deadline);
      watcher?.close();
      resolve(value);
    };
    const check = (): void => {
      if (done()) finish(true);
    };
    try {
      watcher = process.getBuiltinModule('node:fs').watch(join(dir, 'cgroup.events'), check);
      watcher.on('error', () => {});
    } catch {
      watcher = null;
    }
    // Ref'd on purpose: after control EOF these waits may be all that keeps the supervisor alive.
    const poll = setInterval(check, EVENTS_POLL_MS);
    const deadline = setTimeout(() => finish(done()), timeoutMs);
    check();
  });
}
