/**
 * What a run changed in its worktree, against the commit the worktree started from: committed (base..HEAD)
 * and uncommitted (HEAD..working tree, untracked files included) apart, with per-file line counts. Read-only
 * git calls through an injected runner; the file list is bounded and says when it was cut.
 */
import type { Clock } from '../util/clock.ts';
import type { GitRunner } from './git.ts';
import { gitFailure, type WorktreePlace } from './worktree.ts';

/** Files listed in a full result; counts always cover every file. */
export const MAX_WORKTREE_FILES = 200;
/**
 * The whole inspection (its git calls and line counts) before the run may settle: past it the counts are
 * null with `worktree_inspect_timeout`, never guessed. Each git call has its own 10 s bound; this one keeps a
 * file-system read or a slow repository from holding the run's slot.
 */
export const WORKTREE_INSPECT_TIMEOUT_MS = 30_000;

export type ChangeStatus = 'added' | 'modified' | 'deleted';

export type ChangeCounts = {
  files: number;
  added: number;
  modified: number;
  deleted: number;
  /**
   * Text lines; binary files, and untracked files that are too large, symlinks or not regular files, add
   * nothing (their file entry says null).
   */
  lines_added: number;
  lines_deleted: number;
};

export type ChangedFile = {
  path: string;
  status: ChangeStatus;
  committed: boolean;
  lines_added: number | null;
  lines_deleted: number | null;
};

/** The worktree part of a run's result. A type, so it is assignable to JSON values as it is. */
export type WorktreeReport = {
  name: string;
  path: string;
  branch: string;
  /** The commit the branch was created from (its oldest reflog entry); null when git could not say. */
  base_commit: string | null;
  head_commit: string | null;
  committed: ChangeCounts | null;
  uncommitted: ChangeCounts | null;
  files: ChangedFile[];
  files_truncated: boolean;
  /** Why the counts are missing (null when they are complete). */
  changes_error: { code: string; message: string } | null;
};

export interface ChangesDeps {
  readonly git: GitRunner;
  /** Lines of an untracked file (bounded by the caller), or null when it is binary, too large, unreadable or not a regular file. */
  readonly countLines: (path: string) => Promise<number | null>;
  readonly clock: Clock;
  /** WORKTREE_INSPECT_TIMEOUT_MS unless given. */
  readonly timeoutMs?: number;
}

class GitCallFailed extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

async function run(deps: ChangesDeps, cwd: string, args: readonly string[]): Promise<string> {
  const out = await deps.git(args, cwd);
  if (!out.ok) throw new GitCallFailed(out.code, `git ${args[0] ?? ''}: ${gitFailure(out)}`);
  return out.stdout;
}

const STATUS_BY_LETTER: Readonly<Record<string, ChangeStatus>> = { A: 'added', M: 'modified', D: 'deleted', T: 'modified' };

/** `--name-status -z --no-renames`: letter NUL path NUL …; anything but A/M/D/T counts as modified. */
export function parseNameStatus(text: string): Array<{ path: string; status: ChangeStatus }> {
  const tokens = text.split('\0');
  const out: Array<{ path: string; status: ChangeStatus }> = [];
  for (let i = 0; i + 1 < tokens.length; i += 2) {
    const letter = tokens[i] ?? '';
    const path = tokens[i + 1] ?? '';
    if (letter === '' || path === '') continue;
    out.push({ path, status: STATUS_BY_LETTER[letter.charAt(0)] ?? 'modified' });
  }
  return out;
}

/** `--numstat -z --no-renames`: "added TAB deleted TAB path" NUL …; "-" for a binary file. */
export function parseNumstat(text: string): Map<string, { added: number | null; deleted: number | null }> {
  const out = new Map<string, { added: number | null; deleted: number | null }>();
  for (const record of text.split('\0')) {
    const match = /^(\d+|-)\t(\d+|-)\t(.+)$/s.exec(record);
    if (match?.[3] === undefined) continue;
    out.set(match[3], { added: match[1] === '-' ? null : Number(match[1]), deleted: match[2] === '-' ? null : Number(match[2]) });
  }
  return out;
}

export function countChanges(files: readonly ChangedFile[]): ChangeCounts {
  const counts: ChangeCounts = { files: files.length, added: 0, modified: 0, deleted: 0, lines_added: 0, lines_deleted: 0 };
  for (const file of files) {
    counts[file.status] += 1;
    counts.lines_added += file.lines_added ?? 0;
    counts.lines_deleted += file.lines_deleted ?? 0;
  }
  return counts;
}

async function diffFiles(deps: ChangesDeps, cwd: string, range: readonly string[], committed: boolean): Promise<ChangedFile[]> {
  // A submodule's dirty content is not read: git would run `git status` inside it, with the submodule's own
  // config (filters the server cannot see). Its commit changes are still listed.
  const common = ['diff', '--no-ext-diff', '--no-textconv', '--no-renames', '--ignore-submodules=dirty', '-z'];
  const [names, numbers] = await Promise.all([
    run(deps, cwd, [...common, '--name-status', ...range, '--']),
    run(deps, cwd, [...common, '--numstat', ...range, '--']),
  ]);
  const lines = parseNumstat(numbers);
  return parseNameStatus(names).map(({ path, status }) => {
    const n = lines.get(path);
    return { path, status, committed, lines_added: n?.added ?? null, lines_deleted: n?.deleted ?? null };
  });
}

async function untrackedFiles(deps: ChangesDeps, cwd: string): Promise<ChangedFile[]> {
  const listed = (await run(deps, cwd, ['ls-files', '--others', '--exclude-standard', '-z'])).split('\0').filter((p) => p !== '');
  return Promise.all(
    listed.map(async (path, i) => ({
      path,
      status: 'added' as const,
      committed: false,
      // Only listed files are counted; past the list bound a file's lines stay uncounted.
      lines_added: i < MAX_WORKTREE_FILES ? await deps.countLines(`${cwd}/${path}`) : null,
      lines_deleted: 0,
    })),
  );
}

/** Commit the branch was created from: the oldest entry of its reflog ("branch: Created from …"). */
async function baseCommit(deps: ChangesDeps, place: WorktreePlace): Promise<string | null> {
  const out = await deps.git(['reflog', 'show', '--format=%H', `refs/heads/${place.branch}`, '--'], place.path);
  if (!out.ok) return null;
  const shas = out.stdout.split('\n').filter((line) => /^[0-9a-f]{40,64}$/.test(line));
  return shas.at(-1) ?? null;
}

function emptyReport(place: WorktreePlace): WorktreeReport {
  return {
    name: place.name,
    path: place.path,
    branch: place.branch,
    base_commit: null,
    head_commit: null,
    committed: null,
    uncommitted: null,
    files: [],
    files_truncated: false,
    changes_error: null,
  };
}

async function inspect(deps: ChangesDeps, place: WorktreePlace): Promise<WorktreeReport> {
  const report = emptyReport(place);
  try {
    report.head_commit = (await run(deps, place.path, ['rev-parse', '--verify', 'HEAD^{commit}'])).trim();
    report.base_commit = await baseCommit(deps, place);
    const committed = report.base_commit === null ? null : await diffFiles(deps, place.path, [report.base_commit, 'HEAD'], true);
    const uncommitted = [...(await diffFiles(deps, place.path, ['HEAD'], false)), ...(await untrackedFiles(deps, place.path))];
    report.committed = committed === null ? null : countChanges(committed);
    report.uncommitted = countChanges(uncommitted);
    const all = [...(committed ?? []), ...uncommitted];
    report.files = all.slice(0, MAX_WORKTREE_FILES);
    report.files_truncated = all.length > MAX_WORKTREE_FILES;
    if (committed === null)
      report.changes_error = { code: 'base_commit_unknown', message: 'the branch has no reflog entry naming the commit it started from' };
  } catch (error) {
    report.changes_error =
      error instanceof GitCallFailed
        ? { code: error.code, message: error.message }
        : { code: 'git_failed', message: error instanceof Error ? error.message : String(error) };
  }
  return report;
}

/** What the run changed, or, past the time bound, the worktree's place with every count null and the reason. */
export async function inspectWorktree(deps: ChangesDeps, place: WorktreePlace): Promise<WorktreeReport> {
  const timeoutMs = deps.timeoutMs ?? WORKTREE_INSPECT_TIMEOUT_MS;
  let dispose = (): void => {};
  const late = new Promise<WorktreeReport>((resolve) => {
    dispose = deps.clock.setTimeout(() => {
      const message = `the worktree could not be read within ${timeoutMs} ms`;
      resolve({ ...emptyReport(place), changes_error: { code: 'worktree_inspect_timeout', message } });
    }, timeoutMs);
  });
  try {
    return await Promise.race([inspect(deps, place), late]);
  } finally {
    dispose();
  }
}
