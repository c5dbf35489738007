/**
 * `claude-run-mcp check`: a maintainer report on the installed native binary. It resolves the binary,
 * asserts its version, and compares its `--help` options with cli-tree.json. Informational only:
 * nothing at runtime reads help. Prints one JSON report; exit 0 only when the version matches and no
 * declared option drifted (undeclared native options are listed but do not fail the check).
 */
import { assertNever } from '../util/assert-never.ts';
import type { CommandIo } from './command-io.ts';
import { getNativeEnv } from '../native/native-env.ts';
import { ADAPTER_VERSION } from '../version.ts';
import { isToolError } from '../tool-errors.ts';
import { compareHelpWithTree, parseHelpOptions } from '../native/help-drift.ts';
import { resolveNativeBinary } from '../native/resolve-bin.ts';
import { CLI_TREE } from '../native/tree.ts';
import { assertNativeVersion, VERSION_TIMEOUT_MS, type NativeQueryFn } from '../native/version.ts';
import { prepareSupervisor } from '../supervisor/parent/run-supervised.ts';
import {
  CLEANUP_BACKEND_OPTIONS,
  cleanupBackendFor,
  describeCleanup,
  type CleanupBackendOption,
} from '../supervisor/parent/cleanup-backend.ts';
import type { JsonObject } from '../util/json.ts';
import type { DriftReport } from '../native/help-drift.ts';
import type { CliTree } from '../native/tree.ts';
import type { ToolErrorData } from '../tool-errors.ts';

export const MAX_HELP_STDOUT_BYTES = 256 * 1024;

export const CHECK_USAGE = `usage: claude-run-mcp check [--claude-bin PATH] [--cleanup-backend B]

Resolves the Claude Code binary (--claude-bin, then CLAUDE_BIN, then claude on PATH), asserts its version
against cli-tree.json and compares its --help with the declared options. Prints one JSON report on stdout;
exit 0 when the version matches and no declared option drifted, 1 otherwise, 2 for usage errors.

options:
  --claude-bin PATH   Claude Code binary to check
  --cleanup-backend B how the check's own processes are proven gone, as for serve: ${CLEANUP_BACKEND_OPTIONS.join(', ')}
  -h, --help          print this help`;

export type CheckArgs =
  | { readonly kind: 'check'; readonly cliFlag: string | undefined; readonly cleanupBackend?: CleanupBackendOption }
  | { readonly kind: 'help' }
  | { readonly kind: 'error'; readonly message: string };

/** Pure: argv of `check` to the binary flag, help, or a usage error naming the flag. */
export function parseCheckArgs(argv: readonly string[]): CheckArgs {
  let cliFlag: string | undefined;
  let cleanupBackend: CleanupBackendOption | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return { kind: 'help' };
    if (arg === '--cleanup-backend' || arg.startsWith('--cleanup-backend=')) {
      const value = arg === '--cleanup-backend' ? argv[++i] : arg.slice('--cleanup-backend='.length);
      cleanupBackend = CLEANUP_BACKEND_OPTIONS.find((option) => option === value);
      if (cleanupBackend === undefined)
        return { kind: 'error', message: `--cleanup-backend takes one of ${CLEANUP_BACKEND_OPTIONS.join(', ')}` };
      continue;
    }
    if (arg === '--claude-bin' || arg.startsWith('--claude-bin=')) {
      const value = arg === '--claude-bin' ? argv[++i] : arg.slice('--claude-bin='.length);
      if (value === undefined || value === '' || value.startsWith('--'))
        return { kind: 'error', message: '--claude-bin needs a path to the Claude Code binary' };
      cliFlag = value;
      continue;
    }
    return {
      kind: 'error',
      message: `unknown option: ${arg.length > 64 ? `${arg.slice(0, 64)}…` : arg} (check takes --claude-bin PATH, --cleanup-backend B)`,
    };
  }
  return cleanupBackend === undefined ? { kind: 'check', cliFlag } : { kind: 'check', cliFlag, cleanupBackend };
}

export interface CheckInput {
  readonly cliFlag?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string | undefined;
  readonly tree?: CliTree | undefined;
  readonly timeoutMs?: number | undefined;
  /** As the server's --cleanup-backend (default auto); a forced backend that cannot be had throws CleanupBackendUnavailable. */
  readonly cleanupBackend?: CleanupBackendOption | undefined;
  /** Receives the whole report (one JSON document and a newline). */
  readonly write: (text: string) => void;
}

export interface CheckReport {
  readonly ok: boolean;
  readonly binary: string | null;
  readonly tested_version: string;
  readonly version: { readonly ok: true; readonly version: string } | { readonly ok: false; readonly error: ToolErrorData };
  readonly help: ({ readonly ok: boolean } & DriftReport) | { readonly ok: false; readonly error: string } | null;
  /** The two queries ran under a supervisor like any run: whether everything they started is proven gone. */
  readonly cleanup_confirmed: boolean;
  /** How runs here prove cleanup: a cgroup per run, /proc scans and why, or ps tables (docs/supervisor.md). */
  readonly cleanup: JsonObject;
  readonly note: string;
}

const NOTE = 'Checks the binary, its version and its --help only; it says nothing about authentication or backend access.';

/** `claude-run-mcp check [argv]`: help (exit 0), a usage error (exit 2), or the report (exit 0 or 1). */
export async function runCheckCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  const parsed = parseCheckArgs(argv);
  switch (parsed.kind) {
    case 'help':
      io.stdout(`${CHECK_USAGE}\n`);
      return 0;
    case 'error':
      io.stderr(`claude-run-mcp check: ${parsed.message}\n`);
      return 2;
    case 'check':
      return runCheck({ cliFlag: parsed.cliFlag, cleanupBackend: parsed.cleanupBackend, env: io.env, cwd: io.cwd, write: io.stdout });
    default:
      return assertNever(parsed);
  }
}

/** Writes the report and returns the process exit code (0 = no drift and the tested version). */
export async function runCheck(input: CheckInput): Promise<number> {
  const report = await getCheckReport(input);
  input.write(`${JSON.stringify(report, null, 2)}\n`);
  return report.ok ? 0 : 1;
}

export async function getCheckReport(input: CheckInput): Promise<CheckReport> {
  const tree = input.tree ?? CLI_TREE;
  const timeoutMs = input.timeoutMs ?? VERSION_TIMEOUT_MS;
  // The same scrubbed environment a run would get: no reserved host metadata reaches the binary.
  const env = getNativeEnv(input.env, ADAPTER_VERSION);
  const cleanupBackend = cleanupBackendFor(input.cleanupBackend ?? 'auto');
  let bin: string;
  try {
    bin = resolveNativeBinary({ cliFlag: input.cliFlag, env: input.env, cwd: input.cwd });
  } catch (error) {
    return {
      ok: false,
      binary: null,
      tested_version: tree.native.tested_version,
      version: { ok: false, error: errorData(error) },
      help: null,
      cleanup_confirmed: true,
      cleanup: describeCleanup(cleanupBackend),
      note: NOTE,
    };
  }
  const supervisor = prepareSupervisor(undefined, { cleanup: cleanupBackend });
  const cwd = input.cwd ?? process.cwd();
  const query: NativeQueryFn = (q) =>
    supervisor.probe({ file: bin, args: q.args, cwd, env, timeoutMs: q.timeoutMs, maxStdoutBytes: q.maxStdoutBytes });
  let version: CheckReport['version'];
  let help: NonNullable<CheckReport['help']>;
  let cleanupConfirmed = false;
  try {
    try {
      version = { ok: true, ...(await assertNativeVersion({ bin, tree, timeoutMs, query })) };
    } catch (error) {
      version = { ok: false, error: errorData(error) };
    }
    help = await getHelpDrift(query, tree, timeoutMs);
  } finally {
    cleanupConfirmed = (await supervisor.dispose()).cleanup?.confirmed ?? false;
  }
  return {
    ok: version.ok && help.ok && cleanupConfirmed,
    binary: bin,
    tested_version: tree.native.tested_version,
    version,
    help,
    cleanup_confirmed: cleanupConfirmed,
    cleanup: describeCleanup(cleanupBackend),
    note: NOTE,
  };
}

async function getHelpDrift(query: NativeQueryFn, tree: CliTree, timeoutMs: number): Promise<NonNullable<CheckReport['help']>> {
  const result = await query({ args: tree.native.help_args, timeoutMs, maxStdoutBytes: MAX_HELP_STDOUT_BYTES });
  if (result.kind === 'spawn_error') return { ok: false, error: `could not run --help: ${result.message}` };
  if (result.kind === 'timeout') return { ok: false, error: `--help did not answer within ${timeoutMs} ms` };
  if (result.kind === 'cancelled') return { ok: false, error: '--help was ended before it answered' };
  if (result.code !== 0) return { ok: false, error: `--help exited with code ${String(result.code)}` };
  if (result.stdoutOverflow) return { ok: false, error: `--help printed more than ${MAX_HELP_STDOUT_BYTES} bytes` };
  const options = parseHelpOptions(result.stdout);
  if (options.length === 0) return { ok: false, error: '--help listed no options' };
  return compareHelpWithTree(options, tree);
}

function errorData(error: unknown): ToolErrorData {
  if (isToolError(error)) return error.toData();
  throw error;
}
