/**
 * The CLI projection: `claude-run-mcp print --permission-mode MODE [declared options] [--cwd DIR]
 * [--timeout-seconds N] [--claude-bin PATH] -- PROMPT`. Asserts the native version, runs
 * `--output-format json` through the same supervisor and rules as the MCP tools, and writes the single
 * native JSON result to stdout byte for byte. Exit 0 only on native success; otherwise one JSON line
 * `{"code","message"}` on stderr and exit 1 (2 for usage errors). A native result that exists is still
 * printed on failure, since it is the native program's own account of what happened.
 */
import { DEFAULT_MAX_TIMEOUT_SECONDS } from './server-options.ts';
import { isDirectory } from '../util/is-directory.ts';
import { realpathSync } from 'node:fs';
import { CLI_TREE, getNativeArgNames } from '../native/tree.ts';
import { getNativeOptionSchemas } from '../native/schema-gen.ts';
import { buildNativeArgv } from '../native/argv.ts';
import { resolveNativeBinary } from '../native/resolve-bin.ts';
import { assertNativeVersion, VERSION_TIMEOUT_MS } from '../native/version.ts';
import { getNativeEnv } from '../native/native-env.ts';
import { validate } from '../schema/validate.ts';
import { createSessionLock } from '../runs/session-lock.ts';
import { startRunExecution, type PreparedRun } from '../runs/execute.ts';
import type { Classification } from '../runs/classify.ts';
import type { JsonValue } from '../util/json.ts';
import { MAX_FINAL_BYTES } from '../runs/ingest.ts';
import { prepareSupervisor } from '../supervisor/parent/run-supervised.ts';
import { parseRunInput } from '../tools/run-input.ts';
import { isToolError, ToolError } from '../tool-errors.ts';
import { systemClock } from '../util/clock.ts';
import type { JsonSchema } from '../contracts/providers.ts';
import { ADAPTER_VERSION } from '../version.ts';
import { getPrintUsage, parsePrintArgs, toFlagMessage, type PrintArgs } from './print-args.ts';
import type { CommandIo } from './command-io.ts';

export async function runPrint(argv: readonly string[], io: CommandIo): Promise<number> {
  const fail = (code: string, message: string, exit = 1): number => {
    io.stderr(`${JSON.stringify({ code, message })}\n`);
    return exit;
  };
  let parsed: PrintArgs;
  try {
    parsed = parsePrintArgs(argv, CLI_TREE);
  } catch (error) {
    if (isToolError(error)) return fail(error.code, error.message, 2);
    throw error;
  }
  if (parsed.kind === 'help') {
    io.stdout(Buffer.from(`${getPrintUsage(CLI_TREE)}\n`));
    return 0;
  }
  try {
    const outcome = await executePrint(preparePrint(parsed.args, parsed.claudeBin, io), io);
    if (!outcome.is_error) return 0;
    const error = outcome.error ?? { code: 'native_error', message: 'the native run failed' };
    return fail(error.code, error.message);
  } catch (error) {
    // Arguments that fail validation are usage errors (exit 2); anything else refused a well-formed request
    // (exit 1). A refusal about an argument (it has a path) speaks of flags, not of tool argument names.
    if (isToolError(error))
      return fail(
        error.code,
        error.path === undefined ? error.message : toFlagMessage(error.message, error.path, CLI_TREE),
        error.code === 'invalid_arguments' ? 2 : 1,
      );
    throw error;
  }
}

/** The run a print command asks for, checked as a claude.run call would be; throws a ToolError when refused. */
function preparePrint(args: Readonly<Record<string, JsonValue>>, claudeBin: string | null, io: CommandIo): PreparedRun {
  const schema: JsonSchema = {
    type: 'object',
    additionalProperties: true,
    properties: {
      ...getNativeOptionSchemas(CLI_TREE),
      timeout_seconds: { type: 'integer', minimum: 1, maximum: DEFAULT_MAX_TIMEOUT_SECONDS },
    },
  };
  const checked = validate(schema, args);
  if (!checked.ok) throw new ToolError('invalid_arguments', checked.message, checked.path);
  const request = parseRunInput(args, { nativeArgNames: getNativeArgNames(CLI_TREE), defaultCwd: io.cwd, isDirectory });
  const argvOut = buildNativeArgv({
    tree: CLI_TREE,
    outputMode: 'json',
    permissionMode: request.permissionMode,
    options: request.nativeOptions,
    prompt: request.prompt,
  });
  const bin = resolveNativeBinary({ cliFlag: claudeBin ?? undefined, env: io.env, cwd: io.cwd });
  return { request: { ...request, cwd: realpathSync(request.cwd) }, bin, argv: argvOut };
}

/** Runs it supervised, as a tool call would, and prints the native final line; SIGINT/SIGTERM cancel it. */
async function executePrint(prepared: PreparedRun, io: CommandIo): Promise<Classification> {
  const chunks: Buffer[] = [];
  let kept = 0;
  const execution = startRunExecution(
    {
      clock: systemClock,
      checkVersion: async (checked, query) => {
        await assertNativeVersion({ bin: checked, tree: CLI_TREE, timeoutMs: VERSION_TIMEOUT_MS, query });
      },
      prepareSupervisor,
      sessionLock: createSessionLock(),
      listSessionIds: () => [],
      nativeEnv: getNativeEnv(io.env, ADAPTER_VERSION),
    },
    `print_${process.getBuiltinModule('node:crypto').randomBytes(8).toString('hex')}`,
    prepared,
    {
      onState: () => {},
      onStdout: (chunk) => {
        // The json mode prints one line; keep at most the final-event bound (plus its newline).
        if (kept + chunk.length <= MAX_FINAL_BYTES + 1) {
          chunks.push(chunk);
          kept += chunk.length;
        }
      },
    },
  );
  const onSignal = (): void => execution.cancel();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const outcome = await execution.done;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  if (outcome.final !== null) io.stdout(Buffer.concat(chunks));
  return outcome;
}
