/**
 * The CLI projection: `claude-run-mcp print --permission-mode MODE [declared options] [--cwd DIR]
 * [--timeout-seconds N] [--claude-bin PATH] -- PROMPT`. Asserts the native version, runs
 * `--output-format json` through the same supervisor and rules as the MCP tools, and writes the single
 * native JSON result to stdout byte for byte. Exit 0 only on native success; otherwise one JSON line
 * `{"code","message"}` on stderr and exit 1 (2 for usage errors). A native result that exists is still
 * printed on failure, since it is the native program's own account of what happened.
 */
import { assertNever } from '../util/assert-never.ts';
import { DEFAULT_MAX_TIMEOUT_SECONDS } from './args.ts';
import { isDirectory } from '../util/is-directory.ts';
import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { CLI_TREE, getNativeArgNames } from '../native/tree.ts';
import { getNativeOptionSchemas } from '../native/schema-gen.ts';
import { buildNativeArgv } from '../native/argv.ts';
import { resolveNativeBinary } from '../native/resolve-bin.ts';
import { assertNativeVersion, VERSION_TIMEOUT_MS } from '../native/version.ts';
import { getNativeEnv } from '../native/native-env.ts';
import { validate } from '../schema/validate.ts';
import { createSessionLock } from '../runs/session-lock.ts';
import { startRunExecution } from '../runs/execute.ts';
import { MAX_FINAL_BYTES } from '../runs/ingest.ts';
import { prepareSupervisor } from '../supervise/run-supervised.ts';
import { parseRunInput } from '../tools/run-input.ts';
import { isToolError, ToolError } from '../tool-errors.ts';
import { systemClock } from '../util/clock.ts';
import type { JsonObject, JsonValue } from '../util/json.ts';
import type { JsonSchema } from '../mcp/types.ts';
import { ADAPTER_VERSION } from '../version.ts';

export const PRINT_USAGE = 'usage: claude-run-mcp print --permission-mode dontAsk|plan|acceptEdits [declared native options] [--cwd DIR] [--timeout-seconds N] [--claude-bin PATH] -- PROMPT';

export interface PrintIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly stdout: (bytes: Buffer) => void;
  readonly stderr: (text: string) => void;
}

export async function runPrint(argv: readonly string[], io: PrintIo): Promise<number> {
  const fail = (code: string, message: string, exit = 1): number => {
    io.stderr(`${JSON.stringify({ code, message })}\n`);
    return exit;
  };
  let parsed: ParsedPrint;
  try {
    parsed = parsePrintArgs(argv);
  } catch (error) {
    if (isToolError(error)) return fail(error.code, `${error.message}${error.path ? ` (${error.path})` : ''}. ${PRINT_USAGE}`, 2);
    throw error;
  }
  try {
    const schema: JsonSchema = { type: 'object', additionalProperties: true, properties: { ...getNativeOptionSchemas(CLI_TREE), timeout_seconds: { type: 'integer', minimum: 1, maximum: DEFAULT_MAX_TIMEOUT_SECONDS } } };
    const checked = validate(schema, parsed.args);
    if (!checked.ok) throw new ToolError('invalid_arguments', checked.message, checked.path);
    const request = parseRunInput(parsed.args, { nativeArgNames: getNativeArgNames(CLI_TREE), defaultCwd: io.cwd, isDirectory });
    const argvOut = buildNativeArgv({ tree: CLI_TREE, outputMode: 'json', permissionMode: request.permissionMode, options: request.nativeOptions, prompt: request.prompt, promptViaStdin: false });
    const bin = resolveNativeBinary({ cliFlag: parsed.claudeBin ?? undefined, env: io.env, cwd: io.cwd });
    const nativeEnv = getNativeEnv(io.env, ADAPTER_VERSION);
    const chunks: Buffer[] = [];
    let kept = 0;
    const execution = startRunExecution(
      {
        clock: systemClock,
        checkVersion: async (checked) => { await assertNativeVersion({ bin: checked, tree: CLI_TREE, timeoutMs: VERSION_TIMEOUT_MS, env: nativeEnv }); },
        prepareSupervisor,
        sessionLock: createSessionLock(),
        listSessionIds: () => [],
        nativeEnv,
      },
      `print_${randomBytes(8).toString('hex')}`,
      { request: { ...request, cwd: realpathSync(request.cwd) }, bin, argv: argvOut },
      {
        onState: () => {},
        onStdout: (chunk) => {
          // The json mode prints one line; keep at most the final-event bound (plus its newline).
          if (kept + chunk.length <= MAX_FINAL_BYTES + 1) { chunks.push(chunk); kept += chunk.length; }
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
    if (!outcome.is_error) return 0;
    const error = outcome.error ?? { code: 'native_error', message: 'the native run failed' };
    return fail(error.code, error.message);
  } catch (error) {
    if (isToolError(error)) return fail(error.code, error.message + (error.path ? ` (${error.path})` : ''));
    throw error;
  }
}

interface ParsedPrint { readonly args: JsonObject; readonly claudeBin: string | null }

/** Maps native flag spellings declared in cli-tree.json (plus --cwd, --timeout-seconds, --claude-bin) to tool arguments. */
export function parsePrintArgs(argv: readonly string[]): ParsedPrint {
  const args: Record<string, JsonValue> = {};
  let claudeBin: string | null = null;
  let i = 0;
  const valueOf = (flag: string): string => {
    const value = argv[i + 1];
    if (value === undefined) throw new ToolError('invalid_arguments', `${flag} needs a value`, `/${flag}`);
    i += 2;
    return value;
  };
  while (i < argv.length) {
    const flag = argv[i]!;
    if (flag === '--') {
      args['prompt'] = argv.slice(i + 1).join(' ');
      break;
    }
    if (flag === '--cwd') { args['cwd'] = valueOf(flag); continue; }
    if (flag === '--claude-bin') { claudeBin = valueOf(flag); continue; }
    if (flag === '--timeout-seconds') { args['timeout_seconds'] = toNumber(valueOf(flag), 'timeout_seconds'); continue; }
    const option = CLI_TREE.options.find((o) => o.flag === flag);
    if (option === undefined) throw new ToolError('invalid_arguments', `${flag.slice(0, 64)} is not a declared option`, '/argv');
    switch (option.value) {
      case 'none': args[option.arg] = true; i += 1; break;
      case 'list': {
        const list = (args[option.arg] as JsonValue[] | undefined) ?? [];
        list.push(valueOf(flag));
        args[option.arg] = list;
        break;
      }
      case 'number': case 'integer': args[option.arg] = toNumber(valueOf(flag), option.arg); break;
      case 'string': case 'uuid': case 'enum': args[option.arg] = valueOf(flag); break;
      case 'json_schema': args[option.arg] = toJson(valueOf(flag), option.arg); break;
      default: assertNever(option);
    }
  }
  if (typeof args['prompt'] !== 'string' || args['prompt'] === '') throw new ToolError('invalid_arguments', 'a prompt is required after --', '/prompt');
  if (typeof args['permission_mode'] !== 'string') throw new ToolError('invalid_arguments', '--permission-mode is required for print (no default here)', '/permission_mode');
  return { args, claudeBin };
}

function toJson(text: string, arg: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw new ToolError('invalid_arguments', `${arg} must be JSON`, `/${arg}`);
  }
}

function toNumber(text: string, arg: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new ToolError('invalid_arguments', `${arg} must be a number`, `/${arg}`);
  return value;
}

