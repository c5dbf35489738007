// What a spec file leaves behind, found and ended: the process edge of scripts/run-specs.mjs (Linux /proc only).
//
// A file's processes are found by three marks, because no single one reaches every process a spec starts:
// - the marker variable (SPEC_MARKER_ENV), which every process inheriting the file's environment carries
//   (lib/ drops no unknown variable: the supervisor and the native process keep it, tmux servers too);
// - the file's session: the runner starts each file in a new session, which every descendant that does not
//   call setsid stays in, even once orphaned;
// - the file's temp dir as working directory, or named by any environment entry: specs build many child
//   environments from scratch (PATH and HOME only), but give them a HOME, a cwd or a ready file inside a
//   mkdtemp dir, and os.tmpdir() is the file's private dir.
// Together they catch a detached setsid child that was handed a fresh environment (the fake native's
// escapes), as long as its cwd or environment points into the file's temp dir, which every spec fixture's
// does. None can match a process of another run or user: the marker, the session and the dir are this file's.
// Where the runner could give the file a cgroup (spec-cgroup.mjs), its members are a fourth mark, the one a
// process cannot shed, and each kill round also writes the cgroup's `cgroup.kill`: a chain that re-spawns
// into new sessions faster than a scan reads /proc is ended there, found or not.
import { readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { cgroupKill, cgroupTreeMembers } from './spec-cgroup.mjs';

export const SPEC_MARKER_ENV = 'CLAUDE_RUN_MCP_SPEC_MARKER';
const POLL_INTERVAL_MS = 50;
const CMDLINE_SHOWN_CHARS = 160;

/**
 * @typedef {{ markerEquals?: string, markerPrefix?: string, sessions: readonly number[], dirs: readonly string[], cgroup?: string | null }} Owner
 * @typedef {{ pid: number, sid: number, why: string, cmdline: string }} OwnedProcess
 */

/** Live processes (zombies excluded: they hold nothing and vanish with their parent) that belong to `owner`. */
export function findOwned(owner, selfPid = process.pid) {
  const found = [];
  const inCgroup = new Set(owner.cgroup ? cgroupTreeMembers(owner.cgroup) : []);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === selfPid) continue;
    const stat = readOrNull(`/proc/${pid}/stat`);
    if (stat === null) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = fields[0];
    const sid = Number(fields[3]);
    if (state === 'Z' || state === 'X') continue;
    const why = inCgroup.has(pid) ? 'cgroup' : ownership(owner, pid, sid);
    if (why === null) continue;
    const cmdline = (readOrNull(`/proc/${pid}/cmdline`) ?? '')
      .split('\0')
      .filter((p) => p !== '')
      .join(' ');
    found.push({ pid, sid, why, cmdline: cmdline.length > CMDLINE_SHOWN_CHARS ? `${cmdline.slice(0, CMDLINE_SHOWN_CHARS)}…` : cmdline });
  }
  return found;
}

/** Which mark ties the process to the owner, or null. */
function ownership(owner, pid, sid) {
  if (owner.sessions.includes(sid)) return 'session';
  const entries = (readOrNull(`/proc/${pid}/environ`) ?? '').split('\0');
  const marker = `${SPEC_MARKER_ENV}=`;
  for (const entry of entries) {
    if (!entry.startsWith(marker)) continue;
    const value = entry.slice(marker.length);
    if (value === owner.markerEquals || (owner.markerPrefix !== undefined && value.startsWith(owner.markerPrefix))) return 'marker';
  }
  const cwd = linkOrNull(`/proc/${pid}/cwd`);
  for (const dir of owner.dirs) {
    if (cwd !== null && (cwd === dir || cwd.startsWith(`${dir}/`))) return 'cwd';
    if (entries.some((entry) => entry.endsWith(`=${dir}`) || entry.includes(`${dir}/`))) return 'env';
  }
  return null;
}

/** Waits up to `graceMs` for the owner's processes to end by themselves; returns those still alive. */
export async function waitGone(owner, graceMs) {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const left = findOwned(owner);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await sleep(POLL_INTERVAL_MS);
  }
}

/**
 * SIGKILLs the owner's processes until none is left (a dying parent may fork once more) or `deadlineMs`
 * passes. Returns every process seen, and the ones still alive at the deadline.
 */
export async function killOwned(owner, deadlineMs) {
  const deadline = Date.now() + deadlineMs;
  const seen = new Map();
  for (;;) {
    const left = findOwned(owner);
    for (const p of left) if (!seen.has(p.pid)) seen.set(p.pid, p);
    // The cgroup's own list too: a child forked after the scan listed /proc is a member the scan missed.
    const cgroupEmpty = !owner.cgroup || cgroupTreeMembers(owner.cgroup).length === 0;
    if ((left.length === 0 && cgroupEmpty) || Date.now() >= deadline) return { killed: [...seen.values()], survivors: left };
    if (owner.cgroup) cgroupKill(owner.cgroup);
    for (const p of left) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        /* gone between the scan and the kill */
      }
    }
    await sleep(POLL_INTERVAL_MS);
  }
}

/** SIGKILLs a file's whole process group (its root was started detached: group id = its pid). */
export function killGroup(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

/** Names left in a file's temp dir (minus what the runner put there itself), then removes the dir. */
export function removeTempDir(dir, ownEntries) {
  let left = [];
  try {
    left = readdirSync(dir)
      .filter((name) => !ownEntries.includes(name))
      .sort();
  } catch {
    /* already removed */
  }
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  return left;
}

function readOrNull(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function linkOrNull(path) {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}
