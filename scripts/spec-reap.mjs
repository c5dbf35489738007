// What a spec file leaves behind, found and ended: the process edge of scripts/run-specs.mjs (Linux /proc only).
//
// Only what is provably the file's is ended, by one of three marks:
// - its cgroup (spec-cgroup.mjs), where the runner could give it one: the mark a process cannot shed, and each
//   kill round also writes the cgroup's `cgroup.kill`, so a chain that re-spawns into new sessions faster than
//   a scan reads /proc is ended there, found or not;
// - the marker variable (SPEC_MARKER_ENV), which every process inheriting the file's environment carries
//   (lib/ drops no unknown variable: the supervisor and the native process keep it, tmux servers too);
// - the file's session (the runner starts each file in a new one), but only while the file's root process
//   still holds its pid, checked by identity (pid and start time) after the scan: once the root is reaped,
//   its session id is a free pid number that a stranger's new session may take.
// A process whose cwd is in the file's temp dir, or whose environment names it, is only a suspect: specs give
// the fixtures they start with a fresh environment a HOME or a cwd there, but so may anyone's shell opened to
// look at a failing spec (as root, anyone's). Suspects are reported, never signalled.
import { readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { cgroupTreeMembers, killCgroup } from './spec-cgroup.mjs';
import { holdsPid, readStat } from './spec-lib.mjs';

export const SPEC_MARKER_ENV = 'CLAUDE_RUN_MCP_SPEC_MARKER';
const POLL_INTERVAL_MS = 50;
const CMDLINE_SHOWN_CHARS = 160;

/**
 * `roots`: the files' root processes, by identity; their sessions are theirs only while they hold their pids.
 * @typedef {{ markerEquals?: string, markerPrefix?: string, roots: readonly { pid: number, start: string }[], dirs: readonly string[], cgroup?: string | null }} Owner
 * @typedef {{ pid: number, sid: number, why: string, cmdline: string }} OwnedProcess
 */

/**
 * Live processes (zombies excluded: they hold nothing and vanish with their parent) that are provably the
 * owner's (`owned`: cgroup, marker or session), and those that only point into its temp dirs (`suspects`).
 * @returns {{ owned: OwnedProcess[], suspects: OwnedProcess[] }}
 */
export function scanOwned(owner, selfPid = process.pid) {
  const owned = [];
  const suspects = [];
  const bySession = [];
  const inCgroup = new Set(owner.cgroup ? cgroupTreeMembers(owner.cgroup) : []);
  const rootPids = new Set(owner.roots.map((root) => root.pid));
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === selfPid) continue;
    const stat = readStat(pid);
    if (stat === null || stat.state === 'Z' || stat.state === 'X') continue;
    const why = inCgroup.has(pid) ? 'cgroup' : mark(owner, pid);
    if (why === 'cgroup' || why === 'marker') owned.push(described(pid, stat.sid, why));
    else if (rootPids.has(stat.sid)) bySession.push({ process: described(pid, stat.sid, 'session'), otherwise: why });
    else if (why !== null) suspects.push(described(pid, stat.sid, why));
  }
  // Looked at after the scan: a root that still holds its pid held it all along, so its session was its own.
  const liveSessions = new Set(owner.roots.filter(holdsPid).map((root) => root.pid));
  for (const { process: p, otherwise } of bySession) {
    if (liveSessions.has(p.sid)) owned.push(p);
    else if (otherwise !== null) suspects.push({ ...p, why: otherwise });
  }
  return { owned, suspects };
}

/** Which mark ties the process to the owner: 'marker' proves it, 'cwd' and 'env' only suggest it; or null. */
function mark(owner, pid) {
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

function described(pid, sid, why) {
  const cmdline = (readOrNull(`/proc/${pid}/cmdline`) ?? '')
    .split('\0')
    .filter((p) => p !== '')
    .join(' ');
  return { pid, sid, why, cmdline: cmdline.length > CMDLINE_SHOWN_CHARS ? `${cmdline.slice(0, CMDLINE_SHOWN_CHARS)}…` : cmdline };
}

/** Waits up to `graceMs` for the owner's processes to end by themselves; returns those still alive. */
export async function waitGone(owner, graceMs) {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const { owned } = scanOwned(owner);
    if (owned.length === 0 || Date.now() >= deadline) return owned;
    await sleep(POLL_INTERVAL_MS);
  }
}

/**
 * SIGKILLs the owner's processes until none is left (a dying parent may fork once more) or `deadlineMs`
 * passes. Returns every process ended, the ones still alive at the deadline, and the suspects the last scan
 * saw (left alone).
 */
export async function killOwned(owner, deadlineMs) {
  const deadline = Date.now() + deadlineMs;
  const seen = new Map();
  for (;;) {
    const { owned: left, suspects } = scanOwned(owner);
    for (const p of left) if (!seen.has(p.pid)) seen.set(p.pid, p);
    // The cgroup's own list too: a child forked after the scan listed /proc is a member the scan missed.
    const cgroupEmpty = !owner.cgroup || cgroupTreeMembers(owner.cgroup).length === 0;
    if ((left.length === 0 && cgroupEmpty) || Date.now() >= deadline) return { killed: [...seen.values()], survivors: left, suspects };
    if (owner.cgroup) killCgroup(owner.cgroup);
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

/**
 * SIGKILLs a file's whole process group (its root was started detached: group id = its pid). Only while the
 * root is not reaped: then its pid, and so the group id, is nobody else's.
 */
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
