/**
 * Asks the native binary about itself (`--version`, `--help`) with bounded output and a hard timeout,
 * and asserts that the installed version is the tested one. A passing check says the binary runs and
 * has the right version; it says nothing about authentication or backend access.
 */
import { ToolError } from '../tool-errors.ts';
import { assertNever } from '../util/assert-never.ts';
import type { CliTree } from './tree.ts';

export const VERSION_TIMEOUT_MS = 10_000;
export const MAX_VERSION_STDOUT_BYTES = 4096;
const MAX_SNIPPET_CHARS = 160;

/** The version captured by the tree's pattern from trimmed stdout, else null. Pure. */
export function parseNativeVersion(stdout: string, tree: CliTree): string | null {
  const match = new RegExp(tree.native.version_output_pattern).exec(stdout.trim());
  return match?.[1] ?? null;
}

/**
 * What a probe of the binary gave: the supervisor runs it and sends it back as its `probe_result`
 * (lib/supervisor/protocol.ts), this module only reads it.
 */
export type NativeQuery =
  | {
      readonly kind: 'exited';
      readonly code: number | null;
      readonly signal: string | null;
      readonly stdout: string;
      readonly stdoutOverflow: boolean;
      readonly stderr: string;
    }
  | { readonly kind: 'spawn_error'; readonly message: string }
  | { readonly kind: 'timeout' }
  /** Ended because the run was terminated (or the control pipe closed) while it ran. */
  | { readonly kind: 'cancelled' };

/** Runs `bin args` inside the run's supervisor (bounded stdout, hard timeout, leftovers accounted for). */
export type NativeQueryFn = (input: {
  readonly args: readonly string[];
  readonly timeoutMs: number;
  readonly maxStdoutBytes: number;
}) => Promise<NativeQuery>;

export interface AssertNativeVersionInput {
  readonly bin: string;
  readonly tree: CliTree;
  readonly timeoutMs: number;
  readonly query: NativeQueryFn;
}

/** Runs `<bin> --version` and requires exactly the tree's tested version; each failure mode has its own code. */
export async function assertNativeVersion(input: AssertNativeVersionInput): Promise<{ version: string }> {
  const { bin, tree } = input;
  const command = `${bin} ${tree.native.version_args.join(' ')}`;
  const result = await input.query({
    args: tree.native.version_args,
    timeoutMs: input.timeoutMs,
    maxStdoutBytes: MAX_VERSION_STDOUT_BYTES,
  });
  switch (result.kind) {
    case 'spawn_error':
      throw new ToolError('native_version_failed', `Could not run ${command}: ${result.message}`);
    case 'cancelled':
      throw new ToolError('native_version_failed', `${command} was ended before it answered (the run was stopped).`);
    case 'timeout':
      throw new ToolError('native_version_timeout', `${command} did not answer within ${input.timeoutMs} ms; it was killed.`);
    case 'exited': {
      if (result.code !== 0) {
        const how = result.signal !== null ? `was killed by ${result.signal}` : `exited with code ${String(result.code)}`;
        const detail = snippet(result.stderr);
        throw new ToolError('native_version_failed', `${command} ${how}${detail === '' ? '' : `: ${detail}`}`);
      }
      const version = result.stdoutOverflow ? null : parseNativeVersion(result.stdout, tree);
      if (version === null) {
        throw new ToolError(
          'native_version_unreadable',
          `${command} printed ${result.stdoutOverflow ? `more than ${MAX_VERSION_STDOUT_BYTES} bytes` : JSON.stringify(snippet(result.stdout))}, which is not a Claude Code version.`,
        );
      }
      if (version !== tree.native.tested_version) {
        throw new ToolError(
          'native_version_mismatch',
          `Installed Claude Code is ${version} (${bin}), but this adapter was tested with ${tree.native.tested_version} (cli-tree.json). Install ${tree.native.package}@${tree.native.tested_version} or point --claude-bin or CLAUDE_BIN at it.`,
        );
      }
      return { version };
    }
    default:
      return assertNever(result);
  }
}

/** First line, control characters removed, bounded: safe to put in an error message. */
function snippet(text: string): string {
  const line = text.trim().split('\n', 1)[0] ?? '';
  const clean = line.replace(/[\u0000-\u001f\u007f]/g, '');
  return clean.length > MAX_SNIPPET_CHARS ? `${clean.slice(0, MAX_SNIPPET_CHARS)}…` : clean;
}
