/**
 * Wires a broker into a prepared run that opted in to ask_host: creates the run's broker and returns the
 * argv with the stdio prompt tool in it. The broker is the run's to close when the run settles.
 */
import type { PreparedRun } from '../runs/execute.ts';
import type { Clock } from '../util/clock.ts';
import { createPermissionBroker, type PermissionBroker } from './broker.ts';
import { withStdioPromptTool } from './spec.ts';

export interface AskHostDeps {
  readonly clock: Clock;
  readonly random: (bytes: number) => Uint8Array;
  /** cli-tree.json `stdin_channel.permission_prompt_tool`. */
  readonly promptTool: readonly [string, string];
}

export interface AttachedRun {
  readonly prepared: PreparedRun;
  readonly broker: PermissionBroker | null;
}

export function attachAskHost(prepared: PreparedRun, deps: AskHostDeps): AttachedRun {
  const ask = prepared.request.askHost ?? null;
  if (ask === null) return { prepared, broker: null };
  const broker = createPermissionBroker({ clock: deps.clock, random: deps.random, boundMs: ask.timeoutMs });
  const argv = withStdioPromptTool(prepared.argv, { flag: deps.promptTool, useDefaultMode: ask.defaultMode });
  return { prepared: { ...prepared, argv }, broker };
}
