/** Runs the real binary directly (no adapter) and collects its stream-json output with timings. */
import { spawn } from 'node:child_process';
import { createLineSplitter } from '../../lib/util/line-splitter.ts';
import type { NativeSandbox } from '../helpers/native-env.ts';
import { realClaudeBin } from '../helpers/native-env.ts';
import { isJsonObject, lookup } from '../helpers/typed-results.ts';

/** Far above a fake turn (~1 s); only a hung binary reaches it, and then the group is killed. */
export const RUN_DEADLINE_MS = 45_000;

export interface DirectRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly pid: number;
  /** stdout lines that parsed as JSON objects, in order. */
  readonly events: ReadonlyArray<Record<string, unknown>>;
  /** stdout lines that did not (e.g. `--version` output). */
  readonly plainLines: readonly string[];
  readonly stderr: string;
  /** Milliseconds from spawn: first `system/init`, the `result` line, process exit. */
  readonly initMs: number | null;
  readonly resultMs: number | null;
  readonly exitMs: number;
}

/** The CLI's init line is ~3 KB; results a few KB. A runaway line fails the test instead of growing. */
const MAX_EVENT_LINE_BYTES = 4 * 1024 * 1024;

export const STREAM_JSON_ARGS = ['-p', '--output-format', 'stream-json', '--verbose', '--include-partial-messages'] as const;

export interface StartedClaude {
  readonly pid: number;
  /** Signals the process itself (not its group), as a supervisor's cancel would first. */
  kill(signal: NodeJS.Signals): void;
  /** The stdout events so far (grows while the process runs). */
  readonly events: readonly Record<string, unknown>[];
  /** With `stdin: 'pipe'`: writes one line (its newline added), and ends stdin. Null otherwise. */
  readonly input: { write(line: string): void; end(): void } | null;
  readonly done: Promise<DirectRun>;
}

export function runClaude(sandbox: NativeSandbox, args: readonly string[], deadlineMs = RUN_DEADLINE_MS): Promise<DirectRun> {
  return startClaude(sandbox, args, deadlineMs).done;
}

/**
 * Spawned detached (own process group) so the deadline can kill the whole group. `stdin: 'pipe'` keeps the
 * native's stdin open for stream-json input lines (`--input-format stream-json`) until `input.end()`.
 */
export function startClaude(
  sandbox: NativeSandbox,
  args: readonly string[],
  deadlineMs = RUN_DEADLINE_MS,
  stdin: 'ignore' | 'pipe' = 'ignore',
): StartedClaude {
  const started = performance.now();
  const child = spawn(realClaudeBin(), args, {
    cwd: sandbox.cwd,
    env: sandbox.env,
    stdio: [stdin, 'pipe', 'pipe'],
    detached: true,
  });
  const events: Array<Record<string, unknown>> = [];
  const plainLines: string[] = [];
  let initMs: number | null = null;
  let resultMs: number | null = null;
  let stderr = '';
  const lines = createLineSplitter({
    maxLineBytes: MAX_EVENT_LINE_BYTES,
    onOversize: (bytes) => {
      stderr += `\n[test] stdout line over ${MAX_EVENT_LINE_BYTES} bytes (${bytes}) dropped`;
    },
    onLine: (frame) => {
      const line = frame.toString('utf8');
      if (line.trim() === '') return;
      const event = parseObject(line);
      if (event === undefined) {
        plainLines.push(line);
        return;
      }
      const at = performance.now() - started;
      if (initMs === null && event['type'] === 'system' && event['subtype'] === 'init') initMs = at;
      if (event['type'] === 'result') resultMs = at;
      events.push(event);
    },
  });
  const { stdout, stderr: errPipe } = child;
  if (stdout === null || errPipe === null) throw new Error('spawn gave no stdout or stderr pipe');
  stdout.on('data', (chunk: Buffer) => lines.push(chunk));
  stdout.on('end', () => lines.end());
  errPipe.setEncoding('utf8');
  errPipe.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const done = new Promise<DirectRun>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      reject(new Error(`claude did not exit within ${deadlineMs} ms; killed. stderr: ${stderr}`));
    }, deadlineMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, pid: child.pid ?? -1, events, plainLines, stderr, initMs, resultMs, exitMs: performance.now() - started });
    });
  });
  return {
    pid: child.pid ?? -1,
    kill: (signal) => {
      child.kill(signal);
    },
    events,
    input:
      child.stdin === null
        ? null
        : {
            write: (line) => {
              child.stdin?.write(`${line}\n`);
            },
            end: () => {
              child.stdin?.end();
            },
          },
    done,
  };
}

function parseObject(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export function resultOf(run: DirectRun): Record<string, unknown> {
  const result = run.events.find((event) => event['type'] === 'result');
  if (!result) throw new Error(`no result event; stderr: ${run.stderr}`);
  return result;
}

export function kinds(run: DirectRun): string[] {
  return run.events.map((event) => {
    const sub = event['subtype'] ?? lookup(event, 'event', 'type');
    return typeof sub === 'string' ? `${String(event['type'])}/${sub}` : String(event['type']);
  });
}
