/**
 * The portable source's effect edge: one run of the system `ps` (found on PATH, never through a shell) with
 * PS_ARGS, under LC_ALL=C so `lstart` is the C locale's %c. The child gets LC_ALL and PATH and nothing else:
 * no TZ, so every scan prints start times in the same (system) zone. Every way it can fail is a PsFailure
 * naming `ps`; the promise settles only after the child has exited and been reaped.
 */
import { execFile, type ExecFileException } from 'node:child_process';
import { parsePsTable, psFailure, PS_ARGS, type PsFailure, type PsOutput, type PsTableResult } from './ps-table.ts';

/** A full table costs procps ~150 ms of CPU at 1,600 processes; this leaves room for a loaded machine. */
export const PS_TIMEOUT_MS = 10_000;
/** Stdout (and stderr) bound: 1,600 rows of typical commands are a few hundred KiB. */
export const PS_MAX_OUTPUT_BYTES = 8 * 1024 * 1024;
/** How much of ps's stderr a failure quotes (its own message, such as `ps: sid: keyword not found`). */
export const PS_STDERR_QUOTE_CHARS = 200;

export interface PsSourceOptions {
  /** The PATH `ps` is looked up in and runs with. */
  readonly path: string;
  readonly timeoutMs?: number;
  readonly maxOutputBytes?: number;
}

/** Runs `ps` once and parses its table; never throws. */
export async function readPsTable(options: PsSourceOptions): Promise<PsTableResult> {
  const output = await runPs(options);
  return output.kind === 'output' ? parsePsTable(output.stdout.toString('utf8')) : output;
}

/**
 * Runs `ps` once and keeps its output as bytes: the server hands it to supervisors as it is, and each parses
 * it (parsePsTable) as if it had run ps itself. Never throws.
 */
export function runPs(options: PsSourceOptions): Promise<PsOutput> {
  const timeout = options.timeoutMs ?? PS_TIMEOUT_MS;
  const maxBuffer = options.maxOutputBytes ?? PS_MAX_OUTPUT_BYTES;
  return new Promise((resolve) => {
    execFile(
      'ps',
      [...PS_ARGS],
      {
        env: { LC_ALL: 'C', PATH: options.path },
        timeout,
        maxBuffer,
        killSignal: 'SIGKILL',
        encoding: 'buffer',
        windowsHide: true,
        shell: false,
      },
      (error, stdout, stderr) => {
        // The callback runs once the child has exited and its pipes closed.
        if (error === null) resolve({ kind: 'output', stdout });
        else resolve(classifyPsError(error, stderr.toString('utf8'), { timeoutMs: timeout, maxOutputBytes: maxBuffer }));
      },
    );
  });
}

/** Pure: execFile's error to the failure it means. Order matters: the bound and the timeout kill the child too. */
export function classifyPsError(
  error: ExecFileException,
  stderr: string,
  bounds: { readonly timeoutMs: number; readonly maxOutputBytes: number },
): PsFailure {
  if (error.code === 'ENOENT') return psFailure('ps_not_found', 'not found on PATH');
  if (error.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER')
    return psFailure('ps_output_too_large', `printed more than ${bounds.maxOutputBytes} bytes (PS_MAX_OUTPUT_BYTES); it was killed`);
  if (error.killed === true) return psFailure('ps_timeout', `did not finish within ${bounds.timeoutMs} ms (PS_TIMEOUT_MS); it was killed`);
  if (typeof error.signal === 'string') return psFailure('ps_killed', `was ended by ${error.signal}`);
  if (typeof error.code === 'number') return psFailure('ps_exit_nonzero', `exited ${error.code}${quote(stderr)}`);
  return psFailure('ps_spawn_failed', `could not be started (${typeof error.code === 'string' ? error.code : 'unknown error'})`);
}

function quote(stderr: string): string {
  const first = stderr.split('\n', 1)[0]!.trim();
  if (first === '') return '';
  return `: ${first.length > PS_STDERR_QUOTE_CHARS ? `${first.slice(0, PS_STDERR_QUOTE_CHARS)}…` : first}`;
}
