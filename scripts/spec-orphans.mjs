// What an earlier run left when its runner could not reap (SIGKILL, an out-of-memory kill, a CI job's
// timeout): ended by the next run that starts. The runner keeps a record beside its files' temp dirs from
// before its first file starts until everything of the run is reaped (it stays if something could not be); a
// record whose runner is gone (its pid no longer lists the recorded start time, in the same pid namespace)
// names a run whose marks (marker prefix, cgroup) are reaped as the runner would have, and is removed; a process
// that only points into the run's temp dirs is named, never ended (spec-reap.mjs), and the dirs are removed.
// Only this user's records count, and a record names only its own run's cgroup: a stray or planted file in a
// shared /tmp can make the sweep do nothing, never end another run or anything outside the run's cgroup.
// The temp dir is shared and the run id shows in the record's name, so nothing is found by name alone: a temp
// dir is removed only when the record lists it (each is listed before it is made) and it is a real directory
// of this user named for the run; the record is written only through a new file of its own (exclusive,
// unguessable name), so a symlink planted where it writes is never followed.
import { linkSync, lstatSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, normalize } from 'node:path';
import { randomBytes } from 'node:crypto';
import { killOwned, removeTempDir } from './spec-reap.mjs';
import { removeTreeWithin } from './spec-cgroup.mjs';
import { pidSpaceKey, readStat } from './spec-lib.mjs';

const RECORD_NAME = /^crm-spec-([0-9a-f]{8})\.run\.json$/;
const runDirPrefix = (runId) => `crm-spec-${runId}-`;
/** The random part of a record's temp file name: 64 bits, so nobody can plant a symlink there beforehand. */
const RECORD_TEMP_RANDOM_BYTES = 8;
/** The record is its runner's alone: others may see that it exists (its name), not what it says. */
const RECORD_MODE = 0o600;

/** The kernel's start time of a process (clock ticks since boot): with the pid, the runner's identity. */
function startTicks(pid) {
  return readStat(pid)?.start ?? null;
}

/**
 * Writes this runner's first record (`fields`: `cgroup`, the run's cgroup dir or null; `dirs`, the names of its
 * files' temp dirs in `tmp`); returns its path, for `rewriteRun` and `forgetRun`. Throws (EEXIST) when
 * something is already at the record's name: that is not this run's, and is left as it is.
 */
export function recordRun(tmp, runId, fields) {
  const path = join(tmp, `crm-spec-${runId}.run.json`);
  const temp = writeRecordTemp(tmp, runId, fields);
  try {
    // A link, not a rename: it never replaces what is there.
    linkSync(temp, path);
  } finally {
    rmSync(temp, { force: true });
  }
  return path;
}

/** Replaces this runner's record at `path` (made by `recordRun`: in a sticky temp dir, nobody else can swap it). */
export function rewriteRun(path, runId, fields) {
  const temp = writeRecordTemp(dirname(path), runId, fields);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** The record, whole, in a new file of an unguessable name: exclusive, so a name planted there fails the write. */
function writeRecordTemp(tmp, runId, { cgroup, dirs }) {
  const temp = join(tmp, `.crm-spec-${runId}.run.json.${randomBytes(RECORD_TEMP_RANDOM_BYTES).toString('hex')}.tmp`);
  const record = { runId, pid: process.pid, start: startTicks(process.pid), space: pidSpaceKey(), cgroup, dirs };
  writeFileSync(temp, `${JSON.stringify(record)}\n`, { flag: 'wx', mode: RECORD_MODE });
  return temp;
}

export function forgetRun(path) {
  rmSync(path, { force: true });
}

/** The run a record names when its runner is gone; null for a file that is not this user's record, or a live run. */
function orphanOf(tmp, name) {
  const runId = RECORD_NAME.exec(name)?.[1];
  if (runId === undefined) return null;
  let record;
  try {
    const stat = lstatSync(join(tmp, name));
    if (!stat.isFile() || stat.uid !== process.getuid()) return null;
    record = JSON.parse(readFileSync(join(tmp, name), 'utf8'));
  } catch {
    return null;
  }
  if (record?.runId !== runId || typeof record.pid !== 'number') return null;
  // Another pid namespace or boot cannot be looked at from here: its runner may be alive, so leave it.
  // Without this process's own pid space (unreadable, or /proc of another namespace) no owner can be judged.
  const here = pidSpaceKey();
  if (here === null || record.space !== here) return null;
  const now = startTicks(record.pid);
  if (now !== null && (record.start === null || now === record.start)) return null;
  return { runId, cgroup: ownRunCgroup(record.cgroup, runId), dirs: Array.isArray(record.dirs) ? record.dirs : [] };
}

/** The recorded cgroup when it is the run's own (`…/crm-spec-<run id>` under /sys/fs/cgroup), else null. */
function ownRunCgroup(dir, runId) {
  if (typeof dir !== 'string' || !isAbsolute(dir) || normalize(dir) !== dir) return null;
  return dir.startsWith('/sys/fs/cgroup/') && basename(dir) === `crm-spec-${runId}` ? dir : null;
}

/**
 * Ends every process, and removes the listed temp dirs and the cgroup, of runs whose runner is gone. Returns one
 * line per swept run (what was found, or what failed), for the runner to print; empty when there was nothing.
 */
export async function sweepOrphanedRuns(tmp, deadlineMs) {
  let names;
  try {
    names = readdirSync(tmp);
  } catch {
    return [];
  }
  const lines = [];
  for (const name of names) {
    const orphan = orphanOf(tmp, name);
    if (orphan === null) continue;
    try {
      lines.push(await sweepOne(tmp, name, orphan, deadlineMs));
    } catch (error) {
      lines.push(`run ${orphan.runId} (its runner is gone): not swept: ${error.message}`);
    }
  }
  return lines;
}

async function sweepOne(tmp, name, orphan, deadlineMs) {
  const listed = orphan.dirs.map((dir) => [dir, ownTempDir(tmp, orphan.runId, dir)]);
  const dirs = listed.filter(([, is]) => is === 'own').map(([dir]) => join(tmp, dir));
  const leftAlone = listed.filter(([, is]) => is === 'not_own').length;
  const owner = { markerPrefix: `${orphan.runId}-`, roots: [], dirs, cgroup: orphan.cgroup };
  const { killed, survivors, suspects } = await killOwned(owner, deadlineMs);
  for (const dir of dirs) removeTempDir(dir, []);
  const cgroupGone = orphan.cgroup === null || (await removeTreeWithin(orphan.cgroup, deadlineMs));
  if (survivors.length === 0 && cgroupGone) forgetRun(join(tmp, name));
  return (
    `run ${orphan.runId} (its runner is gone): ${killed.length} processes ended${survivors.length > 0 ? `, ${survivors.length} still alive` : ''}, ` +
    `${dirs.length} temp dirs removed${cgroupGone ? '' : `, cgroup ${orphan.cgroup} not removed`}` +
    (leftAlone > 0 ? `, ${leftAlone} listed entries left alone (not a directory of this user named for the run in the temp dir)` : '') +
    suspects
      .map(
        (p) =>
          `; suspect left alone (its ${p.why === 'cwd' ? 'cwd is in' : 'environment names'} a temp dir): process ${p.pid}: ${p.cmdline}`,
      )
      .join('')
  );
}

/**
 * What a name the record lists is: 'own' (a real directory, not a symlink, of this user, named for the run,
 * directly in `tmp`: the run's to remove), 'gone' (nothing there: its file's runner removed it), or 'not_own'.
 */
function ownTempDir(tmp, runId, dir) {
  if (typeof dir !== 'string' || !dir.startsWith(runDirPrefix(runId)) || basename(dir) !== dir) return 'not_own';
  let stat;
  try {
    stat = lstatSync(join(tmp, dir));
  } catch (error) {
    return error.code === 'ENOENT' ? 'gone' : 'not_own';
  }
  return stat.isDirectory() && stat.uid === process.getuid() ? 'own' : 'not_own';
}
