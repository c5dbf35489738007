/**
 * A raw newline-delimited JSON-RPC client over a server child process, for the benchmarks (dev-only).
 * Records the CLOCK_MONOTONIC arrival time of every message so latencies can be compared across processes.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { monoMs } from './stats.ts';

export type Message = Record<string, unknown>;

export interface RpcServer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly pid: number;
  /** Sends a request and resolves with the response and the round trip in ms. */
  request(method: string, params?: Message): Promise<{ response: Message; ms: number }>;
  notify(method: string, params?: Message): void;
  /** Called for every notification with its arrival time (monoMs). */
  onNotification(listener: (message: Message, at: number) => void): void;
  /** Current and peak resident set of the server process, in bytes. */
  rss(): { rss: number; hwm: number };
  /** Resets the kernel's peak-RSS mark (VmHWM) of the server process. */
  resetPeak(): void;
  /** Closes stdin and waits for the exit. */
  close(): Promise<void>;
}

export const INITIALIZE_PARAMS: Message = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } };

export function startRpcServer(file: string, args: readonly string[], options: { env: NodeJS.ProcessEnv; cwd: string }): RpcServer {
  const child = spawn(file, [...args], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not start ${file}`);
  const pid = child.pid;
  const pending = new Map<number, { resolve: (m: Message) => void; sentAt: number }>();
  const listeners: ((message: Message, at: number) => void)[] = [];
  let stderr = '';
  let nextId = 1;
  let carry = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-8192);
  });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const at = monoMs();
    const lines = (carry + chunk).split('\n');
    carry = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') continue;
      const message = JSON.parse(line) as Message;
      const id = message['id'];
      if (typeof id === 'number' && pending.has(id)) {
        const entry = pending.get(id);
        pending.delete(id);
        entry?.resolve({ ...message, __ms: at - (entry?.sentAt ?? at) });
      } else {
        for (const listener of listeners) listener(message, at);
      }
    }
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
  });
  child.once('exit', (code, signal) => {
    for (const entry of pending.values())
      entry.resolve({ error: { message: `server exited (${String(code ?? signal)}): ${stderr}` }, __ms: Number.NaN });
    pending.clear();
  });

  const statusField = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return Number(match?.[1] ?? Number.NaN) * 1024;
  };

  return {
    child,
    pid,
    request(method, params) {
      const id = nextId++;
      return new Promise((resolve) => {
        pending.set(id, {
          sentAt: monoMs(),
          resolve: (message) => {
            const { __ms, ...response } = message;
            resolve({ response, ms: __ms as number });
          },
        });
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) })}\n`);
      });
    },
    notify(method, params) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, ...(params ? { params } : {}) })}\n`);
    },
    onNotification(listener) {
      listeners.push(listener);
    },
    rss: () => ({ rss: statusField('VmRSS'), hwm: statusField('VmHWM') }),
    resetPeak() {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
    },
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}

/** Starts a server and completes the MCP handshake. */
export async function startInitialized(
  file: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd: string },
): Promise<RpcServer> {
  const server = startRpcServer(file, args, options);
  const { response } = await server.request('initialize', INITIALIZE_PARAMS);
  if (!('result' in response)) throw new Error(`initialize failed: ${JSON.stringify(response)}`);
  server.notify('notifications/initialized');
  return server;
}

/** The structured result of a tools/call response (throws on a protocol error). */
export function toolResult(response: Message): { isError: boolean; result: Message } {
  const result = response['result'] as Message | undefined;
  if (result === undefined) throw new Error(`tools/call failed: ${JSON.stringify(response['error'])}`);
  const structured = result['structuredContent'] as Message | undefined;
  return { isError: result['isError'] === true, result: (structured?.['result'] as Message | undefined) ?? structured ?? {} };
}
