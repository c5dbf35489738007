/**
 * The real server process (the spec bundle, or `node --import tsx lib/main.ts` run alone; fake native CLI) driven with raw bytes.
 * Every stdout line is parsed as it arrives; a line that is not JSON is recorded, never skipped.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JsonObject } from '../../lib/util/json.ts';
import { isJsonObject } from '../helpers/typed-results.ts';
import { serverNodeArgs } from '../helpers/bundle.ts';
import { darwinLaunch } from '../helpers/darwin-mode.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const FAKE_CLAUDE = join(ROOT, 'fixtures', 'fake-claude.mjs');
const DEADLINE_MS = 30_000;

export type Message = JsonObject;
/** One stdout line: a message, or the array of a batch reply. */
export type Line = Message | Message[];

export const isBatch = (line: Line): line is Message[] => Array.isArray(line);

export interface RawServer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly pid: number;
  readonly dir: string;
  /** Every stdout line, parsed, in order. */
  readonly messages: Line[];
  /** Stdout lines that were not a JSON object or an array of them (must stay empty). */
  readonly garbage: string[];
  stderr(): string;
  write(bytes: string | Buffer): void;
  send(message: unknown): void;
  /** Resolves once `probe` holds (re-checked on every stdout chunk); rejects at the deadline. */
  waitUntil(what: string, probe: () => boolean, timeoutMs?: number): Promise<void>;
  response(id: unknown): Promise<Message>;
  /** Kernel view of the server's memory: current and peak resident bytes. */
  memory(): { rss: number; hwm: number };
  /** Resets the kernel's peak mark (VmHWM) to the current resident size. */
  resetPeak(): void;
  /** Closes stdin and resolves with the exit status (hard deadline). */
  close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

export const INITIALIZE = (id: unknown, protocolVersion = '2025-06-18'): Record<string, unknown> => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'faults', version: '0' } },
});

export function nativeTestEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, ...extra };
}

export function startRawServer(options: { args?: readonly string[]; env?: Record<string, string>; claudeBin?: string } = {}): RawServer {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-faults-')));
  const serverArgs = ['--claude-bin', options.claudeBin ?? FAKE_CLAUDE, ...(options.args ?? [])];
  const env = { ...nativeTestEnv({ HOME: dir }), ...options.env };
  // In darwin mode (spec/helpers/darwin-mode.ts) the same server runs as on a Mac, traced.
  const command = darwinLaunch(serverArgs, env) ?? { file: process.execPath, args: [...serverNodeArgs(), ...serverArgs], env };
  const child = spawn(command.file, command.args, { cwd: dir, env: command.env, stdio: ['pipe', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error('server did not start');
  const pid = child.pid;
  const messages: Line[] = [];
  const garbage: string[] = [];
  const waiters = new Set<() => void>();
  const notify = (): void => {
    for (const w of waiters) w();
  };
  let stderr = '';
  let carry = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const lines = (carry + chunk).split('\n');
    carry = lines.pop() ?? '';
    for (const line of lines) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        value = undefined;
      }
      if (isJsonObject(value)) messages.push(value);
      else if (Array.isArray(value) && value.every(isJsonObject)) messages.push(value);
      else garbage.push(line.slice(0, 200));
    }
    notify();
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-65536);
  });
  child.stdin.on('error', () => {});
  // 'close', not 'exit': 'exit' can come before the last of stdout or stderr has been read.
  child.once('close', (code, signal) => {
    exit = { code, signal };
    notify();
  });

  const waitUntil = (what: string, probe: () => boolean, timeoutMs = DEADLINE_MS): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (probe()) {
          cleanup();
          resolve();
        } else if (exit !== null) {
          cleanup();
          reject(new Error(`server exited (${JSON.stringify(exit)}) waiting for ${what}; stderr: ${stderr.slice(-2000)}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`deadline waiting for ${what}; stderr: ${stderr.slice(-2000)}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  const statusField = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return Number(match?.[1]) * 1024;
  };

  return {
    child,
    pid,
    dir,
    messages,
    garbage,
    stderr: () => stderr,
    write: (bytes) => {
      child.stdin.write(bytes);
    },
    send: (message) => {
      child.stdin.write(`${JSON.stringify(message)}\n`);
    },
    waitUntil,
    async response(id) {
      const find = (): Message | undefined =>
        messages.find((m): m is Message => !isBatch(m) && m['id'] === id && ('result' in m || 'error' in m));
      await waitUntil(`response ${JSON.stringify(id)}`, () => find() !== undefined);
      const found = find();
      if (found === undefined) throw new Error(`response ${JSON.stringify(id)} vanished`);
      return found;
    },
    memory: () => ({ rss: statusField('VmRSS'), hwm: statusField('VmHWM') }),
    resetPeak: () => {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
    },
    async close() {
      child.stdin.end();
      await waitUntil('exit', () => exit !== null);
      rmSync(dir, { recursive: true, force: true });
      const status: { code: number | null; signal: NodeJS.Signals | null } | null = exit;
      if (status === null) throw new Error('the server exited without a status');
      return status;
    },
    kill() {
      if (exit === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
