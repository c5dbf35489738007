/**
 * The run phase: the native CLI started once, from `spawn`, on the supervisor's own fd 1 (its stdout goes
 * straight to the adapter), its stderr kept as a bounded tail; its exit starts cleanup.
 */
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { RUN_MARKER_ENV, SPAWN_ERROR_FILE_CHANGED, SPAWN_ERROR_NO_CODE, type NativeInputMessage } from '../protocol.ts';
import { readProcStat } from '../../process/proc-table.ts';
import { cleanUp } from './clean-up.ts';
import { nativeImageMismatch, pinFile, versionProofOf, type PinnedFile } from './exe-check.ts';
import { releaseStdout } from './fds.ts';
import type { RunTracker } from './tracker.ts';
import {
  adopt,
  CGROUP_REFUSED_MESSAGE,
  reportLine,
  spawnRunProcess,
  track,
  type SpawnMessage,
  type SupervisorState,
} from './supervisor-state.ts';

export function startNative(s: SupervisorState, message: SpawnMessage): void {
  s.spec = message;
  const runTracker = s.scope === null ? track(s, message.trackIntervalMs) : null;
  // The file to run must be the very file whose version a probe checked (it could have been replaced
  // since): refuse it before anything starts, and run the very inode checked (held open, exe-check.ts).
  const viaProc = s.platform === 'linux';
  const checked = message.expectFileId === null ? null : pinFile(message.file, undefined, viaProc);
  if (message.expectFileId !== null && checked?.id !== message.expectFileId) {
    checked?.release();
    return refuseSpawn(s, SPAWN_ERROR_FILE_CHANGED, `${message.file} is no longer the file whose version was checked; it was not started`);
  }
  const child = spawnRunProcess(s, () =>
    process.getBuiltinModule('node:child_process').spawn(checked?.execPath ?? message.file, [...message.args], {
      argv0: message.file,
      cwd: message.cwd,
      env: { ...message.env, [RUN_MARKER_ENV]: message.marker },
      stdio: [message.stdin === null ? 'ignore' : 'pipe', 1, 'pipe'],
      windowsHide: true,
    }),
  );
  checked?.release();
  if (child === null) return refuseSpawn(s, SPAWN_ERROR_NO_CODE, CGROUP_REFUSED_MESSAGE);
  if (child.pid === undefined) {
    child.once('error', (error: NodeJS.ErrnoException) => {
      refuseSpawn(s, error.code ?? SPAWN_ERROR_NO_CODE, error.message);
    });
    return;
  }
  onSpawned(s, message, child, child.pid, checked, runTracker);
}

/**
 * Feeds the native's open stdin in order. Before the spawn, after `input_end`, or once the native's stdin is
 * gone there is nothing to feed: the line is dropped, as the native could no longer read it anyway.
 */
export function feedNative(s: SupervisorState, message: NativeInputMessage): void {
  const stdin = s.spec?.keepStdinOpen === true ? s.native?.stdin : null;
  if (stdin == null || stdin.writableEnded || stdin.destroyed) return;
  if (message.type === 'input') stdin.write(message.data);
  else if (s.psTrackNow === null) stdin.end();
  // The native exits by itself on this EOF (40-150 ms later, measured): under the portable source, a table
  // first, so what it started is tracked as its own before it can be re-parented out of reach.
  else void s.psTrackNow().finally(() => stdin.end());
}

/** Reports a native that was not (or no longer) run, and cleans up what the run left. */
function refuseSpawn(s: SupervisorState, code: string, message: string): void {
  reportLine(s, { type: 'spawn_error', code, message });
  cleanUp(s, false, 'spawn_error');
}

/** The native has a pid: bind it to the checked image, report it, feed its stdin, keep its stderr tail. */
function onSpawned(
  s: SupervisorState,
  message: SpawnMessage,
  child: ChildProcess,
  pid: number,
  checked: PinnedFile | null,
  runTracker: RunTracker | null,
): void {
  s.native = child;
  releaseStdout();
  adopt(s, child, runTracker);
  // Without /proc no image can be read: the run is held to the file's identity before the spawn only.
  const mismatch = s.platform === 'linux' ? nativeImageMismatch(pid, checked, message.expectFileId, message.expectImageId) : null;
  if (mismatch !== null) {
    // Our unreaped child: its pid is still its own. Killed outright, then the ladder proves the rest gone.
    child.kill('SIGKILL');
    return refuseSpawn(s, SPAWN_ERROR_FILE_CHANGED, `${message.file} was killed as it started: ${mismatch}`);
  }
  const stat = s.platform === 'linux' ? readProcStat(pid) : null;
  const expect = { fileId: message.expectFileId, imageId: message.expectImageId };
  const proof = versionProofOf(pid, message.file, checked, expect, s.platform === 'linux');
  reportLine(s, { type: 'spawned', pid, start: stat?.start ?? '0', pgid: stat?.pgid ?? s.selfPid, version_proof: proof });
  if (child.stdin) {
    child.stdin.on('error', () => {});
    if (message.keepStdinOpen) child.stdin.write(message.stdin ?? '');
    else child.stdin.end(message.stdin ?? '');
  }
  const err = child.stderr;
  if (err) {
    err.on('data', (chunk: Buffer) => {
      s.tail.push(chunk);
    });
    s.settleStderr = watchEnd(err);
  }
  child.once('exit', (code, signal) => {
    reportLine(s, { type: 'exit', code, signal });
    cleanUp(s, false, 'native_exit');
  });
}

/**
 * Watches the native stderr pipe for its end. After cleanup, a pipe still held open by a process that
 * survived is destroyed once graceMs pass, so the report is never held back by it.
 */
function watchEnd(stream: Readable): (graceMs: number) => Promise<void> {
  let ended = false;
  const ends: (() => void)[] = [];
  const markEnded = (): void => {
    ended = true;
    for (const fn of ends.splice(0)) fn();
  };
  stream.once('end', markEnded);
  stream.once('close', markEnded);
  stream.once('error', markEnded);
  return (graceMs) =>
    new Promise((resolve) => {
      if (ended) {
        resolve();
        return;
      }
      const timer = setTimeout(() => {
        stream.destroy();
        markEnded();
      }, graceMs);
      ends.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
}
