/**
 * Whether the system `ps` answers as the portable source needs, asked once, synchronously, where the platform is
 * neither Linux nor macOS (lib/process/platform.ts): one run of `ps` with PS_ARGS, as ps-source.ts runs it
 * (LC_ALL=C and PATH only, never a shell, the same bounds), whose whole output must parse and list this process.
 * node:child_process is loaded here only, at that first use.
 */
import { parsePsTable, psFailure, PS_ARGS, type PsFailure } from './ps-table.ts';

/** The probe's bounds are the portable source's own (ps-source.ts PS_TIMEOUT_MS, PS_MAX_OUTPUT_BYTES). */
const PROBE_TIMEOUT_MS = 10_000;
const PROBE_MAX_OUTPUT_BYTES = 8 * 1024 * 1024;

/** null when ps answered in the expected form; else the failure, naming ps. Never throws. */
export function probePortablePs(path: string, selfPid: number): PsFailure | null {
  let stdout: Buffer;
  try {
    stdout = process.getBuiltinModule('node:child_process').execFileSync('ps', [...PS_ARGS], {
      env: { LC_ALL: 'C', PATH: path },
      timeout: PROBE_TIMEOUT_MS,
      maxBuffer: PROBE_MAX_OUTPUT_BYTES,
      killSignal: 'SIGKILL',
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
  } catch (error) {
    return probeFailure(error as NodeJS.ErrnoException & { status?: number | null; signal?: string | null });
  }
  const table = parsePsTable(stdout.toString('utf8'));
  if (table.kind === 'failure') return table;
  return table.rows.some((row) => row.pid === selfPid) ? null : psFailure('ps_output_invalid', 'its table does not list this process');
}

function probeFailure(error: NodeJS.ErrnoException & { status?: number | null; signal?: string | null }): PsFailure {
  if (error.code === 'ENOENT') return psFailure('ps_not_found', 'not found on PATH');
  if (error.code === 'ENOBUFS') return psFailure('ps_output_too_large', `printed more than ${PROBE_MAX_OUTPUT_BYTES} bytes; it was killed`);
  if (error.code === 'ETIMEDOUT') return psFailure('ps_timeout', `did not finish within ${PROBE_TIMEOUT_MS} ms; it was killed`);
  if (typeof error.signal === 'string') return psFailure('ps_killed', `was ended by ${error.signal}`);
  if (typeof error.status === 'number') return psFailure('ps_exit_nonzero', `exited ${error.status}`);
  return psFailure('ps_spawn_failed', `could not be started (${typeof error.code === 'string' ? error.code : 'unknown error'})`);
}
