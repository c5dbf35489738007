import type { Clock } from '../../lib/util/clock.ts';

/** A manual clock for specs: time moves only when advance() is called. */
export function createManualClock(start = 0): Clock & { advance(ms: number): void; pending(): number } {
  let current = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => current,
    wallNow: () => current,
    setTimeout(fn, ms) {
      const id = ++seq;
      timers.set(id, { at: current + ms, fn });
      return () => {
        timers.delete(id);
      };
    },
    advance(ms) {
      const target = current + ms;
      for (;;) {
        let next: [number, { at: number; fn: () => void }] | undefined;
        for (const entry of timers) if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
        if (!next) break;
        timers.delete(next[0]);
        current = next[1].at;
        next[1].fn();
      }
      current = target;
    },
    pending: () => timers.size,
  };
}
