/** Version checks and native queries the way the product runs them: inside a prepared supervisor. */
import { assertNativeVersion, type NativeQuery, type NativeQueryFn } from '../../lib/native/version.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import { prepareSupervisor, type SupervisedOutcome } from '../../lib/supervisor/parent/run-supervised.ts';

export interface Probed<T> {
  readonly value: T;
  /** The supervisor's outcome after it was disposed: cleanup of everything the probes started. */
  readonly outcome: SupervisedOutcome;
}

/** Runs `use` with a query bound to one fresh supervisor, then disposes it and returns its cleanup outcome. */
export async function withProbes<T>(
  bin: string,
  env: Record<string, string>,
  use: (query: NativeQueryFn) => Promise<T>,
): Promise<Probed<T>> {
  const supervisor = prepareSupervisor();
  const query: NativeQueryFn = (q) =>
    supervisor.probe({ file: bin, args: q.args, cwd: process.cwd(), env, timeoutMs: q.timeoutMs, maxStdoutBytes: q.maxStdoutBytes });
  // A throwing `use` still lets the supervisor go (and waits for its cleanup) before the error surfaces.
  const settled = await use(query).then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  const outcome = await supervisor.dispose();
  if (!settled.ok) throw settled.error;
  return { value: settled.value, outcome };
}

/** assertNativeVersion under a supervisor; rejects like it does (after the supervisor's cleanup). */
export async function checkVersionSupervised(
  bin: string,
  timeoutMs: number,
  env: Record<string, string> = { PATH: process.env['PATH'] ?? '' },
): Promise<{ version: string }> {
  return (await withProbes(bin, env, (query) => assertNativeVersion({ bin, tree: CLI_TREE, timeoutMs, query }))).value;
}

export async function queryOnce(
  bin: string,
  args: readonly string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
  maxStdoutBytes = 256 * 1024,
): Promise<NativeQuery> {
  return (await withProbes(bin, env, (query) => query({ args, timeoutMs, maxStdoutBytes }))).value;
}
