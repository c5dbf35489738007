// What an earlier run left when its runner could not reap (SIGKILL, an out-of-memory kill, a CI job's
// timeout): ended by the next run that starts. The runner keeps a record beside its files' temp dirs from
// before its first file starts until everything of the run is reaped (it stays if something could not be); a
// record whose runner is gone (its pid no longer lists the recorded start time, in the same pid namespace)
// names a run whose marks (marker prefix, cgroup) are reaped as the runner would have, and is removed; a process
// that only points into the run's temp dirs is named, never ended (spec-reap.mjs), and the dirs are removed.
// Only this user's records count, and a record names only its own run's cgroup: a stray or planted file in a
// shared /tmp can make the sweep do nothing, never end another run or anything outside the run's cgroup.
import { lstatSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join, normalize } from 'node:path';
import { killOwned, removeTempDir } from './spec-reap.mjs';
import { removeTreeWithin } from './spec-cgroup.mjs';
import { readStat } from './spec-lib.mjs';

const RECORD_NAME = /^crm-spec-([0-9a-f]{8})\.run\.json$/;
const runDirPrefix = (runId) => `crm-spec-${runId}-`;

/** The kernel's start time of a process (clock ticks since boot): with the pid, the runner's identity. */
function startTicks(pid) {
  return readStat(pid)?.start ?? null;
}

/** This process's pid namespace and boot: a pid means the same process only within both. */
function pidSpace() {
  try {
    return `${readlinkSync('/proc/self/ns/pid')} ${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()}`;
  } catch {
    return null;
  }
}

/** Writes (whole: a temp, then a rename) this runner's record; returns its path, for `forgetRun`. */
export function recordRun(tmp, runId, cgroupDir) {
  const path = join(tmp, `crm-spec-${runId}.run.json`);
  const temp = join(tmp, `.crm-spec-${runId}.run.json.tmp`);
  writeFileSync(
    temp,
    `${JSON.stringify({ runId, pid: process.pid, start: startTicks(process.pid), space: pidSpace(), cgroup: cgroupDir })}\n`,
  );
  renameSync(temp, path);
  return path;
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
  if (record.space !== pidSpace()) return null;
  const now = startTicks(record.pid);
  if (now !== null && (record.start === null || now === record.start)) return null;
  return { runId, cgroup: ownRunCgroup(record.cgroup, runId) };
}

/** The recorded cgroup when it is the run's own (`…/crm-spec-<run id>` under /sys/fs/cgroup), else null. */
function ownRunCgroup(dir, runId) {
  if (typeof dir !== 'string' || !isAbsolute(dir) || normalize(dir) !== dir) return null;
  return dir.startsWith('/sys/fs/cgroup/') && basename(dir) === `crm-spec-${runId}` ? dir : null;
}

/**
 * Ends every process and removes every temp dir and cgroup of runs whose runner is gone. Returns one line per
 * swept run (what was found, or what failed), for the runner to print; empty when there was nothing to sweep.
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
      lines.push(await sweepOne(tmp, name, names, orphan, deadlineMs));
    } catch (error) {
      lines.push(`run ${orphan.runId} (its runner is gone): not swept: ${error.message}`);
    }
  }
  return lines;
}

async function sweepOne(tmp, name, names, orphan, deadlineMs) {
  const dirs = names.filter((n) => n.startsWith(runDirPrefix(orphan.runId))).map((n) => join(tmp, n));
  const owner = { markerPrefix: `${orphan.runId}-`, roots: [], dirs, cgroup: orphan.cgroup };
  const { killed, survivors, suspects } = await killOwned(owner, deadlineMs);
  for (const dir of dirs) removeTempDir(dir, []);
  const cgroupGone = orphan.cgroup === null || (await removeTreeWithin(orphan.cgroup, deadlineMs));
  if (survivors.length === 0 && cgroupGone) forgetRun(join(tmp, name));
  return (
    `run ${orphan.runId} (its runner is gone): ${killed.length} processes ended${survivors.length > 0 ? `, ${survivors.length} still alive` : ''}, ` +
    `${dirs.length} temp dirs removed${cgroupGone ? '' : `, cgroup ${orphan.cgroup} not removed`}` +
    suspects
      .map(
        (p) =>
          `; suspect left alone (its ${p.why === 'cwd' ? 'cwd is in' : 'environment names'} a temp dir): process ${p.pid}: ${p.cmdline}`,
      )
      .join('')
  );
}
