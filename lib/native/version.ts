/**
 * Asks the native binary about itself (`--version`, `--help`) with bounded output and a hard timeout,
 * and asserts that the installed version is the tested one. A passing check says the binary runs and
 * has the right version; it says nothing about authentication or backend access.
 */
import { readProcTable } from '../supervisor/proc-table.ts';
import { isLive } from '../supervisor/proc-stat.ts';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { ToolError } from '../tool-errors.ts';
import { assertNever } from '../util/assert-never.ts';
import { systemClock } from '../util/clock.ts';
import type { Clock } from '../util/clock.ts';
import type { CliTree } from './tree.ts';

export const VERSION_TIMEOUT_MS = 10_000;
export const MAX_VERSION_STDOUT_BYTES = 4096;
const MAX_STDERR_BYTES = 2048;
const MAX_SNIPPET_CHARS = 160;

/** The version captured by the tree's pattern from trimmed stdout, else null. Pure. */
export function parseNativeVersion(stdout: string, tree: CliTree): string | null {
  const match = new RegExp(tree.native.version_output_pattern).exec(stdout.trim());
  return match?.[1] ?? null;
}

export type NativeQuery =
  | { readonly kind: 'exited'; readonly exitCode: number | null; readonly signal: string | null; readonly stdout: string; readonly stdoutOverflow: boolean; readonly stderr: string }
  | { readonly kind: 'spawn_error'; readonly message: string }
  | { readonly kind: 'timeout' };

export interface NativeQueryInput {
  readonly bin: string;
  readonly args: readonly string[];
  readonly timeoutMs: number;
  /** Stdout beyond this is drained and dropped, and reported as overflow. */
  readonly maxStdoutBytes: number;
  readonly env?: Readonly<Record<string, string>> | undefined;
  readonly clock?: Clock | undefined;
}

/**
 * Runs `bin args` without a shell, stdin ignored, in its own process group. On timeout the whole
 * group is SIGKILLed and the child is reaped before this resolves.
 */
export function queryNative(input: NativeQueryInput): Promise<NativeQuery> {
  const clock = input.clock ?? systemClock;
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(input.bin, [...input.args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: input.env ?? process.env });
    } catch (error) {
      resolve({ kind: 'spawn_error', message: errorText(error) });
      return;
    }
    const stdout = capture(child.stdout, input.maxStdoutBytes);
    const stderr = capture(child.stderr, MAX_STDERR_BYTES);
    let settled = false;
    let exited = false;
    let timedOut = false;
    const settle = (result: NativeQuery): void => {
      if (settled) return;
      settled = true;
      cancelTimer();
      resolve(result);
    };
    const cancelTimer = clock.setTimeout(() => {
      timedOut = true;
      // Once the leader is reaped, its group id stays ours only while a member is alive: check first.
      if (!exited || groupHasMembers(child.pid)) killGroup(child);
      child.stdout?.destroy();
      child.stderr?.destroy();
      // Exited already, but a descendant held the pipes open: nothing left to reap.
      if (exited) settle({ kind: 'timeout' });
    }, input.timeoutMs);
    child.on('error', (error) => settle({ kind: 'spawn_error', message: errorText(error) }));
    child.on('exit', () => {
      exited = true;
      if (timedOut) settle({ kind: 'timeout' });
    });
    child.on('close', (exitCode: number | null, signal: NodeJS.Signals | null) => {
      if (timedOut) return settle({ kind: 'timeout' });
      settle({ kind: 'exited', exitCode, signal, stdout: stdout.text(), stdoutOverflow: stdout.overflow(), stderr: stderr.text() });
    });
  });
}

export interface AssertNativeVersionInput {
  readonly bin: string;
  readonly tree: CliTree;
  readonly timeoutMs: number;
  readonly env?: Readonly<Record<string, string>> | undefined;
  readonly clock?: Clock | undefined;
}

/** Runs `<bin> --version` and requires exactly the tree's tested version; each failure mode has its own code. */
export async function assertNativeVersion(input: AssertNativeVersionInput): Promise<{ version: string }> {
  const { bin, tree } = input;
  const command = `${bin} ${tree.native.version_args.join(' ')}`;
  const result = await queryNative({ bin, args: tree.native.version_args, timeoutMs: input.timeoutMs, maxStdoutBytes: MAX_VERSION_STDOUT_BYTES, env: input.env, clock: input.clock });
  switch (result.kind) {
    case 'spawn_error':
      throw new ToolError('native_version_failed', `Could not run ${command}: ${result.message}`);
    case 'timeout':
      throw new ToolError('native_version_timeout', `${command} did not answer within ${input.timeoutMs} ms; it was killed.`);
    case 'exited': {
      if (result.exitCode !== 0) {
        const how = result.signal !== null ? `was killed by ${result.signal}` : `exited with code ${String(result.exitCode)}`;
        const detail = snippet(result.stderr);
        throw new ToolError('native_version_failed', `${command} ${how}${detail === '' ? '' : `: ${detail}`}`);
      }
      const version = result.stdoutOverflow ? null : parseNativeVersion(result.stdout, tree);
      if (version === null) {
        throw new ToolError('native_version_unreadable', `${command} printed ${result.stdoutOverflow ? `more than ${MAX_VERSION_STDOUT_BYTES} bytes` : JSON.stringify(snippet(result.stdout))}, which is not a Claude Code version.`);
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

/** Keeps the first maxBytes of a stream and drains (drops) the rest so the child never blocks. */
function capture(stream: NodeJS.ReadableStream | null, maxBytes: number): { text(): string; overflow(): boolean } {
  const chunks: Buffer[] = [];
  let kept = 0;
  let overflow = false;
  stream?.on('data', (chunk: Buffer) => {
    if (kept >= maxBytes) { overflow = true; return; }
    const part = chunk.length > maxBytes - kept ? chunk.subarray(0, maxBytes - kept) : chunk;
    if (part.length < chunk.length) overflow = true;
    chunks.push(part);
    kept += part.length;
  });
  return { text: () => Buffer.concat(chunks).toString('utf8'), overflow: () => overflow };
}

function groupHasMembers(pgid: number | undefined): boolean {
  return pgid !== undefined && readProcTable().some((stat) => stat.pgid === pgid && isLive(stat));
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL'); // ESRCH: the group is gone; the direct child may still need it
  }
}

/** First line, control characters removed, bounded: safe to put in an error message. */
function snippet(text: string): string {
  const line = text.trim().split('\n', 1)[0] ?? '';
  const clean = line.replace(/[\u0000-\u001f\u007f]/g, '');
  return clean.length > MAX_SNIPPET_CHARS ? `${clean.slice(0, MAX_SNIPPET_CHARS)}…` : clean;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return (error as NodeJS.ErrnoException).code ?? error.message;
  return String(error);
}
