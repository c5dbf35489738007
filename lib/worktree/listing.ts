/**
 * Pure reading of what git prints about worktrees (`worktree list --porcelain -z`, `status --porcelain -z`),
 * of a worktree lock's reason, and of which runs use a worktree.
 */

export interface ListedWorktree {
  readonly path: string;
  /** `locked <reason>`: the reason ('' for a bare `locked`); null when the worktree is not locked. */
  readonly lock: string | null;
}

/** Records of `git worktree list --porcelain -z`: NUL-terminated `key value` fields, each record opened by `worktree`. */
export function parseWorktreeList(text: string): ListedWorktree[] {
  const out: Array<{ path: string; lock: string | null }> = [];
  for (const field of text.split('\0')) {
    if (field.startsWith('worktree ')) out.push({ path: field.slice('worktree '.length), lock: null });
    const last = out.at(-1);
    if (last === undefined) continue;
    if (field === 'locked') last.lock = '';
    else if (field.startsWith('locked ')) last.lock = field.slice('locked '.length);
  }
  return out;
}

/**
 * Claude Code's own lock reason (2.1.332): `claude session <what> (pid N)`, or `(pid N start S)` with the start
 * time it read for itself; `agent` for a subagent's worktree. The pattern is the native's own.
 */
const NATIVE_LOCK = /^claude (?:agent|session) .{1,255} \(pid (\d{1,10})(?: start (.{1,255}))?\)$/s;

/**
 * The pid a lock names, when Claude Code wrote it; null for any other lock (taken by hand, or by a tool whose
 * pid may not even be of this machine). The start is not used: a writer in another time namespace reads
 * another start for the same process, so a differing start does not prove it gone.
 */
export function lockPid(reason: string): number | null {
  const pid = Number(NATIVE_LOCK.exec(reason)?.[1] ?? NaN);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

/** The paths of `git status --porcelain -z`: `XY path` entries; a rename or copy carries its origin as the next field. */
export function parseStatusPaths(text: string): string[] {
  const fields = text.split('\0');
  const out: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i] ?? '';
    if (entry.length < 4) continue;
    out.push(entry.slice(3));
    if (/[RC]/.test(entry.slice(0, 2))) i += 1; // the origin is the same file, not another one
  }
  return out;
}

/** `path` is `dir` or below it; both absolute, without a trailing slash. */
export function isAtOrBelow(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}

/** What a run says of where it works: its request, and its system/init once that arrived. */
export interface RunPlace {
  readonly cwd: string;
  readonly worktreePath: string | null;
  readonly initCwd: string | null;
  /** Resumes or continues a conversation: the native may take it into that conversation's worktree, whatever cwd. */
  readonly resumes: boolean;
}

/**
 * Whether an unsettled run works in worktree `path`. A resumed run whose init has not arrived yet has not said
 * where the native took it, so it counts for every worktree until it does.
 */
export function runUsesWorktree(run: RunPlace, path: string): boolean {
  if (run.worktreePath !== null && isAtOrBelow(run.worktreePath, path)) return true;
  if (run.initCwd !== null) return isAtOrBelow(run.initCwd, path);
  return run.resumes || isAtOrBelow(run.cwd, path);
}
