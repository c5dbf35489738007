// Spawns the real server (or the fake-host fixture server) and speaks raw newline-delimited JSON-RPC.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { JsonObject } from '../../lib/util/json.ts';
import { parseObj } from '../helpers/typed-results.ts';
import { serverNodeArgs } from '../helpers/bundle.ts';
import { darwinLaunch } from '../helpers/darwin-mode.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The server: from the run's spec bundle (a third of the start time), or from source when a file runs on its own. */
export const MAIN = serverNodeArgs();
/** The server from source under tsx, for the specs that keep that mode proven. */
export const SOURCE_MAIN = ['--import', 'tsx', 'lib/main.ts'];
export const FAKE = ['--import', 'tsx', 'fixtures/providers/serve-fake.ts'];
export const DEADLINE_MS = 20_000;

export interface ServerProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every stdout line so far, raw. */
  readonly lines: string[];
  stderr(): string;
  send(message: unknown): void;
  sendRaw(bytes: string | Buffer): void;
  /** Resolves with the first parsed stdout message matching `predicate` (hard deadline). */
  waitForMessage(predicate: (message: JsonObject) => boolean): Promise<JsonObject>;
  /** Resolves with the response carrying this id. */
  /** The response to `id`; `deadlineMs` (default DEADLINE_MS) must outlast any wait the request itself asks for. */
  response(id: unknown, deadlineMs?: number): Promise<JsonObject>;
  /** Resolves with what `probe` gives, checked at each stdout or stderr chunk and at exit (hard deadline). */
  waitUntil<T>(what: string, probe: () => T | undefined): Promise<T>;
  /** Resolves once the server logged that it serves (its readiness signal on stderr). */
  ready(): Promise<void>;
  /** Resolves with the exit code and signal (hard deadline). */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

/**
 * `env` replaces the inherited environment (default: inherited). `command` runs in place of node, with
 * `nodeArgs` as its leading arguments (a wrapper such as unshare that then starts node). In darwin mode
 * (spec/helpers/darwin-mode.ts) the default server runs as on a Mac, under strace.
 */
export function startServer(
  nodeArgs: readonly string[] = MAIN,
  args: readonly string[] = [],
  options: { readonly env?: NodeJS.ProcessEnv; readonly command?: string } = {},
): ServerProcess {
  const darwin = nodeArgs === MAIN && options.command === undefined ? darwinLaunch(args, options.env ?? process.env) : null;
  const env = darwin?.env ?? options.env;
  const child = spawn(darwin?.file ?? options.command ?? process.execPath, darwin?.args ?? [...nodeArgs, ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(env === undefined ? {} : { env }),
  });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  const notify = (): void => {
    for (const waiter of waiters) waiter();
  };
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    notify();
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
    notify();
  });
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  // 'close', not 'exit': 'exit' can come before the last of stdout or stderr has been read.
  child.on('close', (code, signal) => {
    exit = { code, signal };
    notify();
  });

  const until = <T>(probe: () => T | undefined, what: string, deadlineMs = DEADLINE_MS): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const check = (): void => {
        const value = probe();
        if (value !== undefined) {
          cleanup();
          resolve(value);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`deadline: ${what} (${deadlineMs} ms); stderr: ${stderr}`));
      }, deadlineMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  /** The single messages so far (a batch reply, an array, is read from `lines`). */
  const parsed = (): JsonObject[] => lines.filter((line) => !line.startsWith('[')).map((line, i) => parseObj(line, `stdout line ${i + 1}`));
  return {
    child,
    lines,
    stderr: () => stderr,
    send: (message) => {
      child.stdin.write(`${JSON.stringify(message)}\n`);
    },
    sendRaw: (bytes) => {
      child.stdin.write(bytes);
    },
    waitUntil: (what, probe) => until(probe, what),
    waitForMessage: (predicate) => until(() => parsed().find(predicate), 'message'),
    response: (id, deadlineMs) =>
      until(() => parsed().find((m) => m['id'] === id && ('result' in m || 'error' in m)), `response ${String(id)}`, deadlineMs),
    ready: () => until(() => (stderr.includes('serving MCP on stdio') ? true : undefined), 'ready').then(() => {}),
    exited: () => until(() => exit ?? undefined, 'exit'),
    kill: () => {
      if (exit === null) child.kill('SIGKILL');
    },
  };
}
