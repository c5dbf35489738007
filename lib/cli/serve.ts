/**
 * The stdio edge: the only module that touches process.stdin and process.stdout.
 * stdin bytes → connection (splitter → adapter → single writer) → stdout; logs go to stderr only.
 * Stdin EOF, SIGINT and SIGTERM all take the same path: adapter.close() (cleanup of everything the
 * server owns), flush, exit 0.
 */
import type { ResourceHost, ToolHost } from '../mcp/types.ts';
import { createAdapter } from '../adapter.ts';
import { createHosts as createToolHosts } from '../tools/host.ts';
import { serveConnection } from '../rpc/connection.ts';
import { systemClock } from '../util/clock.ts';
import { parseServeArgs, SERVE_USAGE, type ServeConfig } from './args.ts';

/** What serving needs from the tool rooms: the two hosts and the cleanup of what they own. */
export interface HostBundle {
  readonly toolHost: ToolHost;
  readonly resourceHost: ResourceHost;
  readonly close: () => Promise<void>;
}

export type HostFactory = (config: ServeConfig, log: (line: string) => void) => HostBundle;

/** The real hosts: the run tools and resources over the native CLI, configured from the command line. */
export const createDefaultHosts: HostFactory = (config) => createToolHosts({ ...config, env: process.env, cwd: process.cwd() });

const log = (line: string): void => { process.stderr.write(`claude-run-mcp: ${line}\n`); };

/** Runs the stdio server until stdin EOF or a termination signal; resolves with the exit code. */
export async function runServe(argv: readonly string[], createHosts: HostFactory = createDefaultHosts): Promise<number> {
  const parsed = parseServeArgs(argv);
  if (parsed.kind === 'help') {
    process.stdout.write(`${SERVE_USAGE}\n`);
    return 0;
  }
  if (parsed.kind === 'error') {
    process.stderr.write(`claude-run-mcp: ${parsed.message} (claude-run-mcp --help lists the options)\n`);
    return 2;
  }
  const { config } = parsed;
  const hosts = createHosts(config, log);
  const adapter = createAdapter({ toolHost: hosts.toolHost, resourceHost: hosts.resourceHost, onClose: hosts.close, log });
  const connection = serveConnection({
    input: process.stdin,
    output: process.stdout,
    adapter,
    log,
    clock: systemClock,
    maxFrameBytes: config.maxFrameBytes,
  });
  const onSignal = (signal: NodeJS.Signals): void => {
    log(`${signal}: closing`);
    void connection.close();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  log('serving MCP on stdio');
  await connection.closed;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  return 0;
}
