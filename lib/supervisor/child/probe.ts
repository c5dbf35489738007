/**
 * One probe run by the supervisor: a short command (the version check, `--help`) in the run's group with the
 * run's marker, stdout and stderr captured within bounds, SIGKILLed at its timeout. Its leftovers are the
 * run's like any other process: the tracker knows the probe as a root.
 */
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { PROBE_STDERR_MAX_BYTES, PROBE_STDOUT_MAX_BYTES, type ControlMessage, type RawProbeOutcome } from '../protocol.ts';

type ProbeMessage = Extract<ControlMessage, { type: 'probe' }>;

/** After a probe exits, a process it left may hold its pipes open: read on this long, then take what came. */
export const PROBE_PIPE_GRACE_MS = 300;

export interface RunningProbe {
  readonly child: ChildProcess;
  /** SIGKILLs the probe (if still running) and settles it as cancelled. */
  cancel(): void;
}

/** Runs `execPath` (the probe's file, or an alias of it) with argv[0] the file's own path. */
export function startProbe(
  message: ProbeMessage,
  env: Record<string, string>,
  execPath: string,
  onDone: (outcome: RawProbeOutcome) => void,
): RunningProbe | null {
  let settled = false;
  const settle = (outcome: RawProbeOutcome): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    clearTimeout(pipeTimer);
    onDone(outcome);
  };
  const child = process.getBuiltinModule('node:child_process').spawn(execPath, [...message.args], {
    argv0: message.file,
    cwd: message.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
  let pipeTimer: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    child.kill('SIGKILL');
    destroyPipes(child);
    settle({ kind: 'timeout' });
  }, message.timeoutMs);
  if (child.pid === undefined) {
    child.once('error', (error: NodeJS.ErrnoException) => settle({ kind: 'spawn_error', message: error.code ?? error.message }));
    return null;
  }
  child.once('error', () => {});
  const stdout = capture(child.stdout, Math.min(message.maxStdoutBytes, PROBE_STDOUT_MAX_BYTES));
  const stderr = capture(child.stderr, PROBE_STDERR_MAX_BYTES);
  const exited = (code: number | null, signal: NodeJS.Signals | null): void => {
    settle({ kind: 'exited', code, signal, stdout: stdout.bytes(), stdoutOverflow: stdout.overflow(), stderr: stderr.bytes() });
  };
  child.once('exit', (code, signal) => {
    pipeTimer = setTimeout(() => {
      destroyPipes(child);
      exited(code, signal);
    }, PROBE_PIPE_GRACE_MS);
    child.once('close', () => exited(code, signal));
  });
  return {
    child,
    cancel() {
      if (settled) return;
      child.kill('SIGKILL');
      destroyPipes(child);
      settle({ kind: 'cancelled' });
    },
  };
}

function destroyPipes(child: ChildProcess): void {
  child.stdout?.destroy();
  child.stderr?.destroy();
}

/** Keeps the first maxBytes of a stream and drains (drops) the rest so the child never blocks. */
function capture(stream: Readable | null, maxBytes: number): { bytes(): Buffer; overflow(): boolean } {
  const chunks: Buffer[] = [];
  let kept = 0;
  let overflow = false;
  stream?.on('data', (chunk: Buffer) => {
    if (kept >= maxBytes) {
      overflow = true;
      return;
    }
    const part = chunk.length > maxBytes - kept ? chunk.subarray(0, maxBytes - kept) : chunk;
    if (part.length < chunk.length) overflow = true;
    chunks.push(part);
    kept += part.length;
  });
  stream?.on('error', () => {});
  return { bytes: () => Buffer.concat(chunks), overflow: () => overflow };
}
