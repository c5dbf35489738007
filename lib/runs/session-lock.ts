/**
 * Per-conversation serialization. The native CLI has no transcript lock: two concurrent resumes of
 * one session both succeed and fork the transcript. So runs that touch the same conversation take a
 * FIFO lock keyed by it; different keys never wait for each other.
 *
 * Keys (sessionLockKeys):
 * - resume (with or without fork) and a new session_id: 'session:' + id (2.1.332 resumes across
 *   directories, so the id alone is the conversation).
 * - continue: 'cwd:' + cwd, plus 'session:' + the newest session of that cwd when the caller could
 *   resolve it before spawning. Limit: without that id, a continue and a resume of the same
 *   conversation are not serialized against each other; and a fresh run in the same cwd takes no
 *   lock, so its new session could become "newest" under a concurrent continue. cwd must already
 *   be a realpath (two spellings of one directory would get two keys).
 * - fresh (native picks the id): no key.
 * Multiple keys are taken in sorted order, so two multi-key acquirers cannot deadlock.
 */
import { assertNever } from '../util/assert-never.ts';
import { ToolError } from '../tool-errors.ts';
import type { SessionIntent } from './types.ts';

/** Waiters per key beyond the holder. Generous: MAX_ACTIVE_RUNS already bounds real queues. */
export const MAX_WAITERS_PER_SESSION = 32;

export type ReleaseLock = () => void;

export interface SessionLock {
  /** FIFO per key. Rejects with an AbortError when `signal` aborts while waiting, ToolError session_busy when the queue is full. */
  acquire(key: string, signal: AbortSignal): Promise<ReleaseLock>;
  /** Takes every key in sorted order; on failure releases those already held. */
  acquireAll(keys: readonly string[], signal: AbortSignal): Promise<ReleaseLock>;
  isHeld(key: string): boolean;
  waiting(key: string): number;
  /** Keys currently held (entries vanish when the last holder releases with no waiters). */
  size(): number;
}

/** The AbortError-like rejection for a waiter whose signal aborted; `cause` is the abort reason. */
export class LockWaitAborted extends Error {
  readonly code = 'ABORT_ERR';
  constructor(key: string, reason: unknown) {
    super(`stopped waiting for the conversation lock ${key}`, { cause: reason });
    this.name = 'AbortError';
  }
}

interface Waiter {
  readonly grant: () => void;
}

export function createSessionLock(maxWaitersPerKey: number = MAX_WAITERS_PER_SESSION): SessionLock {
  const queues = new Map<string, Waiter[]>(); // present while held; array holds waiters only

  function releaser(key: string): ReleaseLock {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const queue = queues.get(key);
      const next = queue?.shift();
      if (next) next.grant();
      else queues.delete(key);
    };
  }

  function acquire(key: string, signal: AbortSignal): Promise<ReleaseLock> {
    if (signal.aborted) return Promise.reject(new LockWaitAborted(key, signal.reason));
    const queue = queues.get(key);
    if (!queue) {
      queues.set(key, []);
      return Promise.resolve(releaser(key));
    }
    if (queue.length >= maxWaitersPerKey) {
      return Promise.reject(
        new ToolError(
          'session_busy',
          `${queue.length} runs are already waiting for this conversation (limit ${maxWaitersPerKey}); nothing was started.`,
        ),
      );
    }
    return new Promise<ReleaseLock>((resolve, reject) => {
      const onAbort = (): void => {
        const index = queue.indexOf(waiter);
        if (index >= 0) queue.splice(index, 1);
        reject(new LockWaitAborted(key, signal.reason));
      };
      const waiter: Waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(releaser(key));
        },
      };
      queue.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  async function acquireAll(keys: readonly string[], signal: AbortSignal): Promise<ReleaseLock> {
    const held: ReleaseLock[] = [];
    const releaseAll: ReleaseLock = () => {
      for (const release of held.splice(0).reverse()) release();
    };
    try {
      for (const key of [...new Set(keys)].sort()) held.push(await acquire(key, signal));
    } catch (error) {
      releaseAll();
      throw error;
    }
    return releaseAll;
  }

  return {
    acquire,
    acquireAll,
    isHeld: (key) => queues.has(key),
    waiting: (key) => queues.get(key)?.length ?? 0,
    size: () => queues.size,
  };
}

/** The lock keys one run must hold; see the header for the continue limit. */
export function sessionLockKeys(intent: SessionIntent, cwd: string, newestSessionId: string | null = null): string[] {
  switch (intent.kind) {
    case 'fresh':
      return [];
    case 'new':
      return [`session:${intent.sessionId}`];
    case 'resume':
      return [`session:${intent.sessionId}`];
    case 'continue': {
      const keys = [`cwd:${cwd}`];
      if (newestSessionId !== null) keys.push(`session:${newestSessionId}`);
      return keys.sort();
    }
    default:
      return assertNever(intent);
  }
}
