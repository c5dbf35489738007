/**
 * A run whose processes can all be found afterwards: every escapee of the fake CLI carries the trial's private
 * ready-file path in its argv, so "nothing left" is a scan of the whole process table for that path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolHarness, type ToolHarness } from '../helpers/tool-harness.ts';
import type { ProviderConfig } from '../../lib/tools/providers.ts';
import { cmdlineOf } from './proc-helpers.ts';
import { isLive } from '../../lib/process/proc-stat.ts';
import { readProcTable } from '../../lib/process/proc-table.ts';
import { isJsonObject } from '../helpers/typed-results.ts';

/** Live processes (other than this one) whose argv mentions `marker`. */
export function aliveNaming(marker: string): number[] {
  return readProcTable()
    .filter((s) => isLive(s) && s.pid !== process.pid && cmdlineOf(s.pid).includes(marker))
    .map((s) => s.pid);
}

/** Every pid seen naming `marker` while it runs (looked for every `everyMs`): who the trial's processes were. */
export function watchNaming(marker: string, everyMs: number): { readonly seen: ReadonlySet<number>; stop(): void } {
  const seen = new Set<number>();
  const timer = setInterval(() => {
    for (const pid of aliveNaming(marker)) seen.add(pid);
  }, everyMs);
  return {
    seen,
    stop: () => {
      clearInterval(timer);
    },
  };
}

export function killPids(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

export function errorCode(result: Record<string, unknown> | null): unknown {
  const error = result?.['error'];
  return isJsonObject(error) ? error['code'] : undefined;
}

/** Runs `use` with a harness whose fake CLI gets `env` plus a private ready file; leaves nothing behind. */
export async function withTracedHarness<T>(
  prefix: string,
  env: Record<string, string>,
  use: (h: ToolHarness, ready: string) => Promise<T>,
  config: Partial<ProviderConfig> = {},
): Promise<T> {
  const scratch = mkdtempSync(join(tmpdir(), prefix));
  const ready = join(scratch, 'ready.jsonl');
  const h = await createToolHarness({ env: { ...env, FAKE_CLAUDE_READY_FILE: ready }, config });
  try {
    return await use(h, ready);
  } finally {
    killPids(aliveNaming(ready));
    await h.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
