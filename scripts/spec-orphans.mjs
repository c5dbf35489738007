// What an earlier run left when its runner could not reap (SIGKILL, an out-of-memory kill, a CI job's
// timeout): ended by the next run that starts. The runner leaves a record beside its files' temp dirs while
// it runs; a record whose runner is gone (its pid no longer lists the start time recorded) names a run whose
// marks (marker prefix, temp dirs, cgroup) are then reaped as the runner would have, and the record removed.
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killOwned, removeTempDir } from './spec-reap.mjs';
import { removeTreeWithin } from './spec-cgroup.mjs';

const RECORD_SUFFIX = '.run.json';
const runDirPrefix = (runId) => `crm-spec-${runId}-`;

/** The kernel's start time of a process (clock ticks since boot): with the pid, an identity no reuse repeats. */
function startTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Writes this runner's record; returns its path (removed by `forgetRun` once the run is reaped). */
export function recordRun(tmp, runId, cgroupDir) {
  const path = join(tmp, `crm-spec-${runId}${RECORD_SUFFIX}`);
  writeFileSync(path, `${JSON.stringify({ runId, pid: process.pid, start: startTicks(process.pid), cgroup: cgroupDir })}\n`);
  return path;
}

export function forgetRun(path) {
  rmSync(path, { force: true });
}

/** A record's run, or null when the record is not one (a stray file) or its runner still runs. */
function orphanOf(tmp, name) {
  let record;
  try {
    record = JSON.parse(readFileSync(join(tmp, name), 'utf8'));
  } catch {
    return null;
  }
  if (typeof record?.runId !== 'string' || !/^[0-9a-f]+$/.test(record.runId) || typeof record.pid !== 'number') return null;
  const now = startTicks(record.pid);
  // Listed under the same start time (or alive where the record could not read one): that runner still runs.
  if (now !== null && (record.start === null || now === record.start)) return null;
  return { runId: record.runId, cgroup: typeof record.cgroup === 'string' ? record.cgroup : null };
}

/**
 * Ends every process and removes every temp dir and cgroup of runs whose runner is gone. Returns one line per
 * swept run (what was found), for the runner to print; an empty list when there was nothing to sweep.
 */
export async function sweepOrphanedRuns(tmp, deadlineMs) {
  const lines = [];
  let names;
  try {
    names = readdirSync(tmp);
  } catch {
    return lines;
  }
  for (const name of names.filter((n) => n.startsWith('crm-spec-') && n.endsWith(RECORD_SUFFIX))) {
    const orphan = orphanOf(tmp, name);
    if (orphan === null) continue;
    const dirs = names.filter((n) => n.startsWith(runDirPrefix(orphan.runId))).map((n) => join(tmp, n));
    const owner = { markerPrefix: `${orphan.runId}-`, sessions: [], dirs, cgroup: orphan.cgroup };
    const { killed, survivors } = await killOwned(owner, deadlineMs);
    for (const dir of dirs) removeTempDir(dir, []);
    const cgroupGone = orphan.cgroup === null || (await removeTreeWithin(orphan.cgroup, deadlineMs));
    if (survivors.length === 0 && cgroupGone) forgetRun(join(tmp, name));
    lines.push(
      `run ${orphan.runId} (its runner is gone): ${killed.length} processes ended${survivors.length > 0 ? `, ${survivors.length} still alive` : ''}, ` +
        `${dirs.length} temp dirs removed${cgroupGone ? '' : `, cgroup ${orphan.cgroup} not removed`}`,
    );
  }
  return lines;
}
