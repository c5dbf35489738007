/**
 * The server's stdio edge: in the serve role the only module that reads process.stdin or writes
 * process.stdout (lib/main.ts writes stdout for the print and check roles; a supervisor process reads its
 * own stdin as its control pipe).
 * stdin bytes → connection (splitter → adapter → single writer) → stdout; logs go to stderr only.
 * Stdin EOF takes the orderly path: adapter.close() (cleanup of everything the server owns, each run's
 * cleanup report awaited), flush, exit 0. SIGINT and SIGTERM start the same path after starting the end
 * of every run at once, and exit 0 after at most SIGNAL_CLOSE_GRACE_MS (the host is leaving). The tool
 * providers load right after the handshake could be answered (lib/cli/deferred-providers.ts); if they fail to load,
 * the server takes the orderly path too and exits 1.
 */
import type { Providers } from '../contracts/providers.ts';
import { createAdapter } from '../adapter.ts';
import { serveConnection } from '../rpc/connection.ts';
import { systemClock } from '../util/clock.ts';
import { parseServeArgs, SERVE_USAGE } from './args.ts';
import type { ServeConfig } from './server-options.ts';
import { deferProviders } from './deferred-providers.ts';
import { holdYoungGeneration } from './heap.ts';

/**
 * After SIGINT/SIGTERM the orderly close gets this long before the server exits anyway. A host such as
 * Claude Code sends SIGINT, SIGTERM ~100 ms later, then kills: waiting for every run's cleanup report
 * would not fit. Every run's end has already started by then, and each supervisor completes it on its
 * own (it was told to terminate, and it sees its control pipe close when this process exits).
 */
export const SIGNAL_CLOSE_GRACE_MS = 5;

export type ProviderFactory = (config: ServeConfig, log: (line: string) => void) => Promise<Providers>;

/**
 * The real providers: the run tools and resources over the native CLI, configured from the command line. Imported
 * when first needed, after the handshake has been answered (lib/cli/deferred-providers.ts).
 */
export const loadDefaultProviders: ProviderFactory = async (config, log) =>
  (await import('../tools/providers.ts')).createProviders({
    ...config,
    log,
    env: process.env,
    cwd: process.cwd(),
    spareSupervisor: true,
    onFirstUse: () => holdYoungGeneration(process.execArgv, process.env),
  });

const log = (line: string): void => {
  process.stderr.write(`claude-run-mcp: ${line}\n`);
};

/** Runs the stdio server until stdin EOF or a termination signal; resolves with the exit code. */
export async function runServe(argv: readonly string[], loadProviders: ProviderFactory = loadDefaultProviders): Promise<number> {
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
  let loadFailed = false;
  const deferred = deferProviders(
    () =>
      loadProviders(config, log).catch((error: unknown) => {
        // As fatal as it was before the load was deferred (an embedded cli-tree that fails its check, a broken
        // build): the requests that waited get their errors first, then the server closes and exits 1.
        loadFailed = true;
        setImmediate(() => {
          void connection.close();
        });
        throw error;
        // createProviders always composes a task provider: discover can say so before the load.
      }),
    log,
    { withTasks: true },
  );
  const { providers } = deferred;
  const adapter = createAdapter({
    toolProvider: providers.toolProvider,
    resourceProvider: providers.resourceProvider,
    onClose: providers.close,
    log,
  });
  const connection = serveConnection({
    input: process.stdin,
    output: process.stdout,
    adapter: { ...adapter, handle: deferred.gate(adapter.handle) },
    log,
    clock: systemClock,
    maxFrameBytes: config.maxFrameBytes,
  });
  let signalled = (): void => {};
  const gaveUp = new Promise<void>((resolve) => {
    signalled = () => {
      setTimeout(resolve, SIGNAL_CLOSE_GRACE_MS);
    };
  });
  const onSignal = (signal: NodeJS.Signals): void => {
    log(`${signal}: closing`);
    providers.stop();
    signalled();
    void connection.close();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // After the first poll of stdin: an `initialize` already waiting there is answered before the readiness
  // line (opening stderr costs a start time too) and before the providers load.
  setImmediate(() => {
    log('serving MCP on stdio');
    deferred.start();
  });
  await Promise.race([connection.closed, gaveUp]);
  // The handlers stay until the process exits: Claude Code follows SIGINT with SIGTERM about 100 ms later,
  // and a signal without a handler would end the exiting server by its default action (no exit code 0).
  return loadFailed ? 1 : 0;
}
