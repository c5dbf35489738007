/**
 * How a run that asks its host is launched: the bridge's names, its environment, its command (from
 * source or from the bundle), and the native flags that wire it in. Pure apart from module resolution.
 */
import { fileURLToPath } from 'node:url';
import type { NativeArgv } from '../native/argv.ts';

/** The private role of the bundle that serves the permission tool. */
export const BRIDGE_ARGV_FLAG = '__permission-bridge';
/** The MCP server name in the nested CLI's --mcp-config; unusual so that it does not meet a user's own. */
export const BRIDGE_SERVER = 'claude_run_mcp_permission';
export const BRIDGE_TOOL = 'approve';
/** What --permission-prompt-tool names: mcp__<server>__<tool> (verified on the pinned CLI). */
export const BRIDGE_TOOL_QUALIFIED = `mcp__${BRIDGE_SERVER}__${BRIDGE_TOOL}`;

export const BRIDGE_ENV = {
  socket: 'CLAUDE_RUN_MCP_PERMISSION_SOCKET',
  token: 'CLAUDE_RUN_MCP_PERMISSION_TOKEN',
  boundMs: 'CLAUDE_RUN_MCP_PERMISSION_BOUND_MS',
} as const;

/** The bridge's own deadline is the broker's bound plus this (it only covers a silent broker). */
export const BRIDGE_MARGIN_MS = 5_000;
/** The CLI's per-server tool timeout (its backstop) is the broker's bound plus this. */
export const CLI_BACKSTOP_MARGIN_MS = 15_000;

export const DEFAULT_ASK_HOST_TIMEOUT_SECONDS = 180;
export const MAX_ASK_HOST_TIMEOUT_SECONDS = 3600;

export interface BridgeCommand {
  readonly file: string;
  readonly args: readonly string[];
}

/** From source run lib/permission/bridge-main.ts under tsx; bundled, re-run the bundle with the role flag. */
export function getBridgeCommand(moduleUrl: string = import.meta.url): BridgeCommand {
  if (moduleUrl.endsWith('.ts')) {
    return {
      file: process.execPath,
      args: ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL('./bridge-main.ts', moduleUrl))],
    };
  }
  return { file: process.execPath, args: [fileURLToPath(moduleUrl), BRIDGE_ARGV_FLAG] };
}

/**
 * The bridge command beside a supervisor command that runs a bundle's private role (`<bundle> __supervisor`):
 * the same bundle in the bridge role. A library loaded from source that starts its supervisors from a
 * bundle (options.supervisorCommand) takes its bridge from there too. Otherwise null.
 */
export function bridgeCommandBeside(supervisor: BridgeCommand | undefined, supervisorFlag: string): BridgeCommand | null {
  if (supervisor === undefined || supervisor.args.at(-1) !== supervisorFlag) return null;
  return { file: supervisor.file, args: [...supervisor.args.slice(0, -1), BRIDGE_ARGV_FLAG] };
}

export interface BridgeWiring {
  readonly command: BridgeCommand;
  readonly boundMs: number;
  /** True when the caller left permission_mode unset: the run then uses the native `default` mode. */
  readonly useDefaultMode: boolean;
  /** cli-tree.json `permission_prompt_tool`: the flags verified on the tested version. */
  readonly flags: { readonly flag: string; readonly mcp_config_flag: string };
}

/**
 * What the bridge needs to reach its broker, for the native process's environment: the native CLI starts
 * its MCP servers with its own environment plus the server's `env` (measured on the pinned CLI), and a
 * process's environment is readable only by its own user (/proc/<pid>/environ), unlike its argv.
 */
export function bridgeEnv(socketPath: string, token: string): Readonly<Record<string, string>> {
  return { [BRIDGE_ENV.socket]: socketPath, [BRIDGE_ENV.token]: token };
}

/**
 * The native argv with the bridge wired in: --mcp-config (additive: the user's own servers stay),
 * --permission-prompt-tool, and, when the caller chose no mode, `--permission-mode default` (the mode in
 * which every undecided prompt reaches the tool). The prompt is never in argv, so they are appended.
 */
export function withPermissionBridge(argv: NativeArgv, wiring: BridgeWiring): NativeArgv {
  const config = {
    mcpServers: {
      [BRIDGE_SERVER]: {
        command: wiring.command.file,
        args: [...wiring.command.args],
        // The socket path and token are not here: this JSON is on the native's command line, which every
        // local user can read. They travel in the native's environment (bridgeEnv), which it passes on.
        env: { [BRIDGE_ENV.boundMs]: String(wiring.boundMs) },
        timeout: wiring.boundMs + CLI_BACKSTOP_MARGIN_MS,
      },
    },
  };
  const args = [...argv.args];
  if (wiring.useDefaultMode) {
    const at = args.indexOf('--permission-mode');
    if (at >= 0 && at + 1 < args.length) args[at + 1] = 'default';
  }
  const extra = [wiring.flags.mcp_config_flag, JSON.stringify(config), wiring.flags.flag, BRIDGE_TOOL_QUALIFIED];
  args.push(...extra);
  return { ...argv, args };
}
