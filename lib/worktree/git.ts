/**
 * The one place git is started: `git` with an argv (never a shell), bounded in time and output, killed with
 * SIGKILL at its bound, and reaped before the call returns, so no git process outlives the call that made it.
 * Read-only callers set GIT_OPTIONAL_LOCKS=0: a status or diff then never takes the index lock a run's own
 * git (or another run's) may hold.
 */
import { execFile, execFileSync } from 'node:child_process';

/** One git call is a few milliseconds; a loaded 2-core box or a large repository stays far below this. */
export const GIT_TIMEOUT_MS = 10_000;
/** stdout of one call; a diff listing beyond it is reported as unavailable, never cut silently. */
export const GIT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

export type GitOutcome =
  | { readonly ok: true; readonly stdout: string }
  | {
      readonly ok: false;
      readonly code: 'git_not_found' | 'git_timeout' | 'git_output_too_large' | 'git_exit_nonzero';
      readonly exitCode: number | null;
      readonly stderr: string;
    };

/** Runs `git <args>` in `cwd`. Never throws: failures are data. */
export type GitRunner = (args: readonly string[], cwd: string) => Promise<GitOutcome>;
export type GitRunnerSync = (args: readonly string[], cwd: string) => GitOutcome;

export interface GitRunnerOptions {
  readonly bin?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs?: number;
  readonly maxOutputBytes?: number;
}

/** Keeps a stderr line for messages, short. */
const MAX_STDERR_CHARS = 400;

function gitEnv(env: Readonly<Record<string, string | undefined>>): NodeJS.ProcessEnv {
  // Messages in one language, no pager or prompt, no optional locks.
  return { ...env, LC_ALL: 'C', GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat' };
}

function classify(error: unknown, stdout: string, stderr: string, maxOutputBytes: number): GitOutcome {
  if (error === null || error === undefined) return { ok: true, stdout };
  const e = error as NodeJS.ErrnoException & {
    killed?: boolean;
    signal?: string | null;
    code?: string | number | null;
    status?: number | null;
  };
  const tail = String(stderr).slice(0, MAX_STDERR_CHARS);
  if (e.code === 'ENOENT') return { ok: false, code: 'git_not_found', exitCode: null, stderr: tail };
  if (e.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER' || e.code === 'ENOBUFS' || Buffer.byteLength(stdout) > maxOutputBytes)
    return { ok: false, code: 'git_output_too_large', exitCode: null, stderr: tail };
  if (e.killed === true || e.signal === 'SIGKILL' || e.code === 'ETIMEDOUT')
    return { ok: false, code: 'git_timeout', exitCode: null, stderr: tail };
  const exitCode = typeof e.code === 'number' ? e.code : typeof e.status === 'number' ? e.status : null;
  return { ok: false, code: 'git_exit_nonzero', exitCode, stderr: tail };
}

export function createGitRunner(options: GitRunnerOptions): GitRunner {
  const timeout = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const maxBuffer = options.maxOutputBytes ?? GIT_MAX_OUTPUT_BYTES;
  const env = gitEnv(options.env);
  return (args, cwd) =>
    new Promise((resolve) => {
      execFile(
        options.bin ?? 'git',
        [...args],
        { cwd, env, timeout, maxBuffer, killSignal: 'SIGKILL', encoding: 'utf8', windowsHide: true, shell: false },
        (error, stdout, stderr) => {
          // The callback runs after the child exited and was reaped.
          resolve(classify(error, String(stdout), String(stderr), maxBuffer));
        },
      );
    });
}

/** The same, synchronous: for the checks made before a run is started (two calls of a few ms). */
export function createGitRunnerSync(options: GitRunnerOptions): GitRunnerSync {
  const timeout = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const maxBuffer = options.maxOutputBytes ?? GIT_MAX_OUTPUT_BYTES;
  const env = gitEnv(options.env);
  return (args, cwd) => {
    try {
      const stdout = execFileSync(options.bin ?? 'git', [...args], {
        cwd,
        env,
        timeout,
        maxBuffer,
        killSignal: 'SIGKILL',
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
        shell: false,
      });
      return { ok: true, stdout };
    } catch (error) {
      const e = error as { stdout?: unknown; stderr?: unknown };
      return classify(error, String(e.stdout ?? ''), String(e.stderr ?? ''), maxBuffer);
    }
  };
}
