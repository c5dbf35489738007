/** Injected time: production wires node:timers, specs use a manual clock. */
export interface Clock {
  /** Milliseconds, monotonic within one process. */
  now(): number;
  /** Wall-clock epoch milliseconds (for reported timestamps only). */
  wallNow(): number;
  /** Schedules fn after ms; returns a disposer. Timers never keep the process alive. */
  setTimeout(fn: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
