/**
 * How the darwin-emulated tier starts a server, and the switch that lets a process spec written for Linux run
 * there unchanged: a `*.darwin.process.test.ts` file calls `await enableDarwinMode()` and imports the spec file;
 * from then on the spec helpers that start the default server (spec/faults/raw-server.ts, spec/e2e/server-process.ts)
 * start it as on a Mac, and after each test every trace it made is judged (spec/helpers/darwin-trace.ts).
 *
 * As on a Mac: `node --require fixtures/platform-preload.cjs` with PRELOAD_PLATFORM=darwin (the server alone:
 * it tells its supervisors the platform), fixtures/bsd-ps first on PATH, and the spec bundle, the whole tree
 * under strace. `-D` keeps the server the spawned process itself (its pid, exit status and signals are the
 * spec's), strace running beside it as a detached grandchild; a trace is read once no process names its file.
 *
 * strace arguments beyond `-f -e trace=%file`: `%process` shows each clone and execve, so every thread is
 * attributed to its process and program; `-y` names each descriptor's path (an `openat(fd, "stat")` relative
 * to a directory is read whole); `-s 4096` prints whole paths and argv; `--seccomp-bpf` stops the tracee only
 * at the traced calls; `-qq` and `-e signal=none` leave out notices that name no file.
 */
import assert from 'node:assert/strict';
import { after, afterEach } from 'node:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { specBundle } from './bundle.ts';
import { describeViolations, judgeTrace, type TraceVerdict } from './darwin-trace.ts';
import { readProcTable } from '../../lib/process/proc-table.ts';
import { pollUntil } from './poll.ts';
import { parseStrace } from './strace.ts';

export const PRELOAD = fileURLToPath(new URL('../../fixtures/platform-preload.cjs', import.meta.url));
export const BSD_PS_DIR = fileURLToPath(new URL('../../fixtures/bsd-ps', import.meta.url));
export const STRACE_ARGS = ['-D', '-f', '-qq', '--seccomp-bpf', '-y', '-s', '4096', '-e', 'signal=none', '-e', 'trace=%file,%process'];
/** strace ends once every traced process has; a test's own cleanup has ended them by the time this runs out. */
const STRACE_END_MS = 30_000;

/** Throws, naming how to install strace, when there is none (the tier fails, never skips). */
export function assertStrace(): void {
  const probe = spawnSync('strace', ['-V'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `the darwin-emulated tier needs strace (${probe.error?.message ?? `strace -V exited ${String(probe.status)}`}): apt-get install strace (.ci/run installs it)`,
    );
  }
}

/** Numbers this process's trace files (each launch gets a file of its own). */
let traceCount = 0;

export interface DarwinLaunch {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly traceFile: string;
}

/** The command that starts `bundle` with `serverArgs` as on a Mac (unless `env` names another PRELOAD_PLATFORM), traced into a new file of `traceDir`. */
export function darwinCommand(bundle: string, serverArgs: readonly string[], env: NodeJS.ProcessEnv, traceDir: string): DarwinLaunch {
  const traceFile = join(traceDir, `strace-${traceCount++}.txt`);
  return {
    file: 'strace',
    args: [...STRACE_ARGS, '-o', traceFile, process.execPath, '--require', PRELOAD, bundle, ...serverArgs],
    env: { ...env, PRELOAD_PLATFORM: env['PRELOAD_PLATFORM'] ?? 'darwin', PATH: `${BSD_PS_DIR}:${env['PATH'] ?? '/usr/bin:/bin'}` },
    traceFile,
  };
}

/** Resolves once no process names the trace file (strace has written all of it and exited), then judges it. */
export async function judgeTraceFile(traceFile: string, bundle: string): Promise<TraceVerdict> {
  await pollUntil(
    `strace writing ${traceFile} to end`,
    () => !readProcTable().some((s) => s.pid !== process.pid && cmdline(s.pid).includes(traceFile)),
    { timeoutMs: STRACE_END_MS, intervalMs: 50 },
  );
  return judgeTrace(parseStrace(readFileSync(traceFile, 'latin1')), { productScript: bundle, preload: PRELOAD });
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch {
    return '';
  }
}

interface Mode {
  readonly bundle: string;
  readonly traceDir: string;
  readonly pending: string[];
}

let mode: Mode | null = null;

/**
 * Turns darwin mode on for this spec file: checks strace, builds (or finds) the spec bundle, and judges after
 * each test every trace the test made: a forbidden access, an unread line or an unattributed thread fails it.
 */
export async function enableDarwinMode(): Promise<void> {
  assertStrace();
  const traceDir = mkdtempSync(join(tmpdir(), 'crm-darwin-traces-'));
  mode = { bundle: await specBundle(), traceDir, pending: [] };
  after(() => rmSync(traceDir, { recursive: true, force: true }));
  afterEach(async () => {
    const current = mode;
    if (current === null) return;
    const files = current.pending.splice(0);
    const problems: string[] = [];
    for (const file of files) {
      const verdict = await judgeTraceFile(file, current.bundle);
      rmSync(file, { force: true });
      if (!verdict.rootArgv.includes(PRELOAD)) problems.push(`${file}: the server did not run preloaded`);
      if (verdict.unread.length > 0 || verdict.unattributed.length > 0) {
        const lines = verdict.unread.slice(0, 3).map((u) => `line ${u.line}: ${u.text.slice(0, 300)}`);
        problems.push(
          `${file}: ${verdict.unread.length} lines unread (${lines.join(' | ')}), threads unattributed: ${verdict.unattributed.join(', ')}`,
        );
      }
      if (verdict.violations.length > 0) problems.push(`forbidden on darwin:\n${describeViolations(verdict)}`);
    }
    if (problems.length > 0) throw new Error(problems.join('\n'));
  });
}

/** In darwin mode, the command that starts the default server with `serverArgs` (its trace judged after the test); else null. */
export function darwinLaunch(serverArgs: readonly string[], env: NodeJS.ProcessEnv): DarwinLaunch | null {
  if (mode === null) return null;
  const launch = darwinCommand(mode.bundle, serverArgs, env, mode.traceDir);
  mode.pending.push(launch.traceFile);
  return launch;
}

/** Whether this spec file runs its servers as darwin (enableDarwinMode was called). */
export function inDarwinMode(): boolean {
  return mode !== null;
}

/**
 * A run's tool result served as a success. On Linux: not an error, cleanup confirmed. In darwin mode (the
 * portable source) cleanup may instead be left unconfirmed by an orphan someone else started meanwhile (this
 * machine's other jobs daemonize; `ps` cannot tell their orphans from the run's): then only with that reason.
 */
export function assertRunServed(isError: unknown, result: Record<string, unknown>, context: string): void {
  if (mode === null || result['cleanup_confirmed'] === true) {
    assert.equal(isError, false, context);
    assert.equal(result['cleanup_confirmed'], true, context);
    return;
  }
  const error = result['error'];
  assert.ok(typeof error === 'object' && error !== null && (error as Record<string, unknown>)['code'] === 'cleanup_unconfirmed', context);
  assert.match(String((error as Record<string, unknown>)['message']), /^unattributed orphan\(s\) started during the run/, context);
}
