/**
 * The one place git is started: `git` with an argv (never a shell), bounded in time and output, in a process
 * group of its own that is SIGKILLed at its bound (and by `stop` when the server leaves), and reaped before
 * the call returns. Git runs nothing the repository configures: the host's session variables and any GIT_*
 * variable that would redirect it are removed (git-env.ts), fsmonitor and signature checks are off, and every
 * call that may read worktree content first turns off the filter drivers the configuration names.
 * GIT_OPTIONAL_LOCKS=0: a status or diff never takes the index lock a run's own git (or another run's) may hold.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { filterNeutralizing, FILTER_LIST_ARGS, gitEnv, needsFilterList, parseFilterNames } from './git-env.ts';

/** One git call is a few milliseconds; a loaded 2-core box or a large repository stays far below this. */
export const GIT_TIMEOUT_MS = 10_000;
/** stdout of one call; a diff listing beyond it is reported as unavailable, never cut silently. */
export const GIT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
/** Filter drivers a repository may configure; past this a content-reading call is refused, not run with them. */
export const MAX_NEUTRALIZED_FILTERS = 64;

export type GitFailureCode =
  'git_not_found' | 'git_timeout' | 'git_output_too_large' | 'git_exit_nonzero' | 'git_too_many_filters' | 'git_stopped';

export type GitOutcome =
  | { readonly ok: true; readonly stdout: string }
  | { readonly ok: false; readonly code: GitFailureCode; readonly exitCode: number | null; readonly stderr: string };

/** Runs `git <args>` in `cwd`. Never throws: failures are data. */
export type GitRunner = (args: readonly string[], cwd: string) => Promise<GitOutcome>;
export type GitRunnerSync = (args: readonly string[], cwd: string) => GitOutcome;

/** The composition's runner: its calls in flight can be ended when the server leaves. */
export interface OwnedGitRunner extends GitRunner {
  /** SIGKILLs the process group of every call still running (each returns git_timeout); later calls start nothing (git_stopped). */
  readonly stop: () => void;
  /** Calls still running. */
  readonly running: () => number;
}

export interface GitRunnerOptions {
  readonly bin?: string;
  /** The server's environment; what git sees derives from it (git-env.ts). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs?: number;
  readonly maxOutputBytes?: number;
}

/** Keeps a stderr line for messages, short. */
const MAX_STDERR_CHARS = 400;

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

/**
 * The extra config of a call: none when it reads no worktree content, else the configured filter drivers
 * turned off. A failed listing is the call's outcome (the call is not made without it); exit 1 means none.
 */
function configFor(listed: GitOutcome | null): readonly (readonly [string, string])[] | Exclude<GitOutcome, { ok: true }> {
  if (listed === null) return [];
  if (!listed.ok) return listed.code === 'git_exit_nonzero' && listed.exitCode === 1 ? [] : listed;
  const names = parseFilterNames(listed.stdout);
  if (names.length > MAX_NEUTRALIZED_FILTERS)
    return { ok: false, code: 'git_too_many_filters', exitCode: null, stderr: `${names.length} filter drivers configured` };
  return filterNeutralizing(names);
}

interface Call {
  readonly bin: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is gone already.
  }
}

/** One spawn: the whole output read from the start, the group SIGKILLed at the bound; settles once reaped. */
function spawnGit(call: Call, live: Set<() => void>): Promise<GitOutcome> {
  return new Promise((resolve) => {
    const child = spawn(call.bin, [...call.args], { cwd: call.cwd, env: call.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let failure: 'timeout' | 'too_large' | null = null;
    let exited = false;
    // Something git started may hold the pipes past git's exit: once git ended and the bound is past, let them go.
    const release = (): void => {
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const end = (kind: 'timeout' | 'too_large'): void => {
      failure ??= kind;
      // Once git is reaped its group id may be free and reused: a group is signalled only while its leader is unreaped.
      if (!exited) killGroup(child);
      else release();
    };
    const timer = setTimeout(() => end('timeout'), call.timeoutMs);
    const stop = (): void => end('timeout');
    live.add(stop);
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > call.maxBytes) end('too_large');
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < MAX_STDERR_CHARS) err += chunk.toString('utf8');
    });
    let settled = false;
    const settle = (outcome: GitOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      live.delete(stop);
      resolve(outcome);
    };
    child.on('error', (error) => settle(classify(error, '', err, call.maxBytes)));
    child.on('exit', () => {
      exited = true;
      if (failure !== null) release();
    });
    child.on('close', (code, signal) => {
      const stderr = err.slice(0, MAX_STDERR_CHARS);
      if (failure === 'too_large') settle({ ok: false, code: 'git_output_too_large', exitCode: null, stderr });
      else if (failure === 'timeout') settle({ ok: false, code: 'git_timeout', exitCode: null, stderr });
      else if (code === 0) settle({ ok: true, stdout: Buffer.concat(out).toString('utf8') });
      else settle(classify({ code, signal }, '', err, call.maxBytes));
    });
  });
}

export function createGitRunner(options: GitRunnerOptions): OwnedGitRunner {
  const bin = options.bin ?? 'git';
  const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const maxBytes = options.maxOutputBytes ?? GIT_MAX_OUTPUT_BYTES;
  const live = new Set<() => void>();
  const base = { bin, timeoutMs, maxBytes };
  let stopped = false;
  const run = async (args: readonly string[], cwd: string): Promise<GitOutcome> => {
    if (stopped) return { ok: false, code: 'git_stopped', exitCode: null, stderr: '' };
    const listed = needsFilterList(args)
      ? await spawnGit({ ...base, args: FILTER_LIST_ARGS, cwd, env: gitEnv(options.env, []) }, live)
      : null;
    const config = configFor(listed);
    if (!Array.isArray(config)) return config as Exclude<GitOutcome, { ok: true }>;
    if (stopped) return { ok: false, code: 'git_stopped', exitCode: null, stderr: '' };
    return spawnGit({ ...base, args, cwd, env: gitEnv(options.env, config) }, live);
  };
  return Object.assign(run, {
    stop: () => {
      stopped = true;
      for (const stop of [...live]) stop();
    },
    running: () => live.size,
  });
}

/** The same, synchronous: for the checks made before a run is started (two calls of a few ms). */
export function createGitRunnerSync(options: GitRunnerOptions): GitRunnerSync {
  const timeout = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const maxBuffer = options.maxOutputBytes ?? GIT_MAX_OUTPUT_BYTES;
  const once = (args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): GitOutcome => {
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
  return (args, cwd) => {
    const config = configFor(needsFilterList(args) ? once(FILTER_LIST_ARGS, cwd, gitEnv(options.env, [])) : null);
    if (!Array.isArray(config)) return config as Exclude<GitOutcome, { ok: true }>;
    return once(args, cwd, gitEnv(options.env, config));
  };
}
