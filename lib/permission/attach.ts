/**
 * Wires a broker into a prepared run that opted in to ask_host: creates the run's broker and returns the
 * argv with the bridge in it, and the environment that tells the bridge where its broker is and how to
 * authenticate. The broker is the run's to close when the run settles.
 */
import type { PreparedRun } from '../runs/execute.ts';
import type { Clock } from '../util/clock.ts';
import { createPermissionBroker, type PermissionBroker } from './broker.ts';
import { bridgeEnv, getBridgeCommand, withPermissionBridge, type BridgeCommand } from './spec.ts';

export interface AskHostDeps {
  readonly clock: Clock;
  readonly random: (bytes: number) => Uint8Array;
  /** cli-tree.json `permission_prompt_tool` flags. */
  readonly flags: { readonly flag: string; readonly mcp_config_flag: string };
  readonly bridgeCommand?: BridgeCommand;
  readonly baseDir?: string;
  /** The private directory's name prefix, read at the first ask_host run (privateDirPrefix). */
  readonly dirPrefix?: () => string;
}

export interface AttachedRun {
  readonly prepared: PreparedRun;
  readonly broker: PermissionBroker | null;
}

export function attachAskHost(prepared: PreparedRun, deps: AskHostDeps): AttachedRun {
  const ask = prepared.request.askHost ?? null;
  if (ask === null) return { prepared, broker: null };
  const broker = createPermissionBroker({
    clock: deps.clock,
    random: deps.random,
    boundMs: ask.timeoutMs,
    ...(deps.baseDir ? { baseDir: deps.baseDir } : {}),
    ...(deps.dirPrefix ? { dirPrefix: deps.dirPrefix() } : {}),
  });
  const argv = withPermissionBridge(prepared.argv, {
    command: deps.bridgeCommand ?? getBridgeCommand(),
    boundMs: ask.timeoutMs,
    useDefaultMode: ask.defaultMode,
    flags: deps.flags,
  });
  return { prepared: { ...prepared, argv, env: { ...prepared.env, ...bridgeEnv(broker.socketPath, broker.token) } }, broker };
}
