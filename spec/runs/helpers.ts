import { createManualClock } from '../helpers/manual-clock.ts';
import { createRunRegistry } from '../../lib/runs/registry.ts';
import type { RegistryOptions, RunRegistry } from '../../lib/runs/registry.ts';
import type { RandomBytes } from '../../lib/runs/ids.ts';
import { isToolError } from '../../lib/tool-errors.ts';

/** Deterministic, never-repeating "random" bytes: a counter in the last four bytes. */
export function counterRandom(): RandomBytes {
  let n = 0;
  return (bytes) => {
    const buffer = Buffer.alloc(bytes);
    buffer.writeUInt32BE(++n, bytes - 4);
    return buffer;
  };
}

export interface Live {
  readonly tag: string;
}

export function makeRegistry(overrides: Partial<Omit<RegistryOptions, 'clock' | 'random'>> = {}) {
  const clock = createManualClock(Date.UTC(2025, 0, 1));
  const registry: RunRegistry<Live> = createRunRegistry<Live>({ clock, random: counterRandom(), ...overrides });
  const reserve = (acquiredBy: string | null = 'inv-1', sync = false) =>
    registry.reserve({ acquiredBy, sync, live: (runId) => ({ tag: `live:${runId}` }) });
  /** Reserves and settles with confirmed cleanup: an evictable run. */
  const done = (acquiredBy: string | null = 'inv-1') => {
    const entry = reserve(acquiredBy);
    clock.advance(1);
    return registry.settle(entry.run_id, { cleanupConfirmed: true });
  };
  return { clock, registry, reserve, done };
}

export function toolErrorCode(code: string) {
  return (error: unknown): boolean => {
    if (!isToolError(error) || error.code !== code) {
      throw new Error(`expected ToolError ${code}, got ${isToolError(error) ? error.code : 'no ToolError'}: ${String(error)}`);
    }
    return true;
  };
}
