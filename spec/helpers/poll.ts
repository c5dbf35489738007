/**
 * The one polling helper of the specs. Polling is for state that emits no event a spec can await (the
 * process table, a file a fixture writes, a tool the client must ask); every poll has a deadline and
 * fails naming what it waited for. Where an event exists, await the event instead.
 */
import { setTimeout as delay } from 'node:timers/promises';

export const DEFAULT_POLL_INTERVAL_MS = 20;

export interface PollOptions {
  /** The hard deadline: past it the poll rejects. */
  readonly timeoutMs: number;
  readonly intervalMs?: number;
}

/** The deadline of a poll passed (a caller that reports what is left instead of failing catches only this). */
export class PollTimeoutError extends Error {
  override readonly name = 'PollTimeoutError';
}

/**
 * `what` may be a function, read only when the poll times out (to name the state seen last).
 * Calls `probe` (sync or async) until it gives a value other than undefined or false, and resolves with
 * it; rejects with a PollTimeoutError "timed out after N ms waiting for <what>" once `timeoutMs` has passed. The probe always
 * runs at least once, and once more at the deadline, so a state reached just in time is not missed.
 */
export async function pollUntil<T>(
  what: string | (() => string),
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: PollOptions,
): Promise<T> {
  const deadline = performance.now() + options.timeoutMs;
  const interval = options.intervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  for (;;) {
    const late = performance.now() >= deadline;
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (late) throw new PollTimeoutError(`timed out after ${options.timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await delay(Math.min(interval, Math.max(0, deadline - performance.now())));
  }
}
