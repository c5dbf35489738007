/**
 * The server's stdio edge: in the serve role the only module that reads process.stdin or writes
 * process.stdout (lib/main.ts writes stdout for the print and check roles; a supervisor process reads its
 * own stdin as its control pipe).
 * stdin bytes → connection (splitter → adapter → single writer) → stdout; logs go to stderr only.
 * Stdin EOF takes the orderly path: adapter.close() (cleanup of everything the server owns, each run's
 * cleanup report awaited), flush, exit 0. SIGINT and SIGTERM start the same path after starting the end
 * of every run at once, and exit 0 after at most SIGNAL_CLOSE_GRACE_MS (the host is leaving).
 */
import type { HostBundle } from '../mcp/types.ts';
import { createAdapter } from '../adapter.ts';
import { createHosts as createToolHosts } from '../tools/host.ts';
import { serveConnection } from '../rpc/connection.ts';
import { systemClock } from '../util/clock.ts';
import { parseServeArgs, SERVE_USAGE, type ServeConfig } from './args.ts';
import { holdYoungGeneration } from './heap.ts';


/**
 * After SIGINT/SIGTERM the orderly close gets this long before the server exits anyway. A host such as
 * Claude Code sends SIGINT, SIGTERM ~100 ms later, then kills: waiting for every run's cleanup report
 * would not fit. Every run's end has already started by then, and each supervisor completes it on its
 * own (it was told to terminate, and it sees its control pipe close when this process exits).
 */
export const SIGNAL_CLOSE_GRACE_MS = 5;

export type HostFactory = (config: ServeConfig, log: (line: string) => void) => HostBundle;

/** The real hosts: the run tools and resources over the native CLI, configured from the command line. */
export const createDefaultHosts: HostFactory = (config) =>
  createToolHosts({ ...config, env: process.env, cwd: process.cwd(), spareSupervisor: true, onFirstUse: () => holdYoungGeneration(process.execArgv, process.env) });

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
  let signalled = (): void => {};
  const gaveUp = new Promise<void>((resolve) => { signalled = () => { setTimeout(resolve, SIGNAL_CLOSE_GRACE_MS); }; });
  const onSignal = (signal: NodeJS.Signals): void => {
    log(`${signal}: closing`);
    hosts.stop();
    signalled();
    void connection.close();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  log('serving MCP on stdio');
  await Promise.race([connection.closed, gaveUp]);
  // The handlers stay until the process exits: Claude Code follows SIGINT with SIGTERM about 100 ms later,
  // and a signal without a handler would end the exiting server by its default action (no exit code 0).
  return 0;
}
