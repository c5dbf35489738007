/**
 * The composition root: picks a role from argv[2] and exits with its code.
 * `serve` is the default, also when the first argument is an option. `--help`/`-h` and `--version` print
 * on stdout and exit 0; usage errors exit 2. `__supervisor` is the private role of the supervisor child
 * when running from the single-file bundle. The bundle required as a module (not run) is the package's
 * library: it exports lib/npm-entry.ts and runs no role. On a platform lib/process/platform.ts refuses (Windows,
 * and any but Linux and macOS), every public role stops at once with one JSON `platform_unsupported` line on
 * stderr and exit 1.
 */
import type { CommandIo } from './cli/command-io.ts';
import { hostPlatform, platformRefusalLine } from './process/platform.ts';

type Role = (args: readonly string[]) => Promise<number>;

/** The process's own environment and streams, for the one-shot commands. */
const processIo = (): CommandIo => ({
  env: process.env,
  cwd: process.cwd(),
  stdout: (chunk) => {
    process.stdout.write(chunk);
  },
  stderr: (text) => {
    process.stderr.write(text);
  },
});

// Roles load lazily so each pays only for its own modules.
const ROLES = {
  serve: async (args) => (await import('./cli/serve.ts')).runServe(args),
  print: async (args) => (await import('./cli/print.ts')).runPrint(args, processIo()),
  check: async (args) => (await import('./cli/check.ts')).runCheckCommand(args, processIo()),
} as const satisfies Record<string, Role>;

/** Answers that need no role: the top-level help and the versions. */
const INFO: Readonly<Record<string, () => Promise<string>>> = {
  '--help': async () => (await import('./cli/args.ts')).SERVE_USAGE,
  '-h': async () => (await import('./cli/args.ts')).SERVE_USAGE,
  '--version': async () => {
    const [{ ADAPTER_VERSION }, { CLI_TREE }] = await Promise.all([import('./version.ts'), import('./native/tree.ts')]);
    return `claude-run-mcp ${ADAPTER_VERSION} (tested with Claude Code ${CLI_TREE.native.tested_version})`;
  },
};

async function main(argv: readonly string[]): Promise<number> {
  const first = argv[0];
  const info = first === undefined || !Object.hasOwn(INFO, first) ? undefined : INFO[first];
  if (info !== undefined) {
    process.stdout.write(`${await info()}\n`);
    return 0;
  }
  if (first === undefined || first.startsWith('-')) return ROLES.serve(argv);
  if (!Object.hasOwn(ROLES, first)) {
    process.stderr.write(`claude-run-mcp: unknown command: ${first.slice(0, 64)} (known: ${Object.keys(ROLES).join(', ')})\n`);
    return 2;
  }
  return ROLES[first as keyof typeof ROLES](argv.slice(1));
}

// No top-level await: the bundle is CommonJS (scripts/build.ts), and the roles start from promise callbacks.
if (isRequiredBundle()) {
  // The package's library API (require('claude-run-mcp'), and dist/index.mjs over it): no role runs.
  module.exports = require('./npm-entry.ts');
} else if (process.argv[2] === '__supervisor') {
  // The supervisor owns its stdio from the first instruction: nothing else may write to it.
  void import('./supervisor/child/main.ts').then(({ runSupervisor }) => runSupervisor());
} else {
  const platform = hostPlatform();
  if (platform.kind === 'refused') {
    // Refused before any role loads: nothing is spawned, read or served. One JSON line on stderr, like the print
    // role's errors; stdout stays empty for an MCP host that reads it as its channel.
    process.stderr.write(`${platformRefusalLine(platform)}\n`);
    process.exitCode = 1;
  } else runRole(process.argv.slice(2));
}

function runRole(argv: readonly string[]): void {
  // Every role has already cleaned up what it owns. Stdout writes to a pipe queue in libuv once the
  // pipe is full, and process.exit drops that queue, so wait until stdout drained first: as long as
  // the reader keeps reading, giving up only after FLUSH_STALL_MS without progress. serve has already
  // waited that way for its own output (lib/rpc/connection.ts): a second wait would only double the
  // time a stuck reader holds up the exit.
  const flushedByRole = argv[0] === undefined || (argv[0].startsWith('-') && !Object.hasOwn(INFO, argv[0])) || argv[0] === 'serve';
  const exit = async (code: number, flushed: boolean): Promise<void> => {
    if (flushed) process.exit(code);
    const { flushOutput } = await import('./rpc/drain.ts');
    const { systemClock } = await import('./util/clock.ts');
    if (!flushed && !(await flushOutput(process.stdout, systemClock)))
      process.stderr.write('claude-run-mcp: gave up on stdout: the reader stopped reading\n');
    process.exit(code);
  };
  main(argv).then(
    (code) => exit(code, flushedByRole),
    (error: unknown) => {
      process.stderr.write(`claude-run-mcp: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      return exit(1, false);
    },
  );
}

/**
 * The bundle required as a module rather than run: CommonJS with a real `require` (from source this file
 * is an ES module script; tsx may wrap it, but gives it no require), and not the process's main module.
 * Compared by file name, which holds inside any module wrapper.
 */
function isRequiredBundle(): boolean {
  return typeof require === 'function' && typeof module !== 'undefined' && require.main?.filename !== __filename;
}
