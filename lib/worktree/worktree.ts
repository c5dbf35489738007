/**
 * A run's git worktree as the pinned CLI makes it (`-p --worktree <name>`, cli-tree.json): where it is,
 * its branch, and the checks made before a run may ask for one. Pure over an injected git runner.
 */
import { ToolError } from '../tool-errors.ts';
import { assertNever } from '../util/assert-never.ts';
import type { GitOutcome, GitRunnerSync } from './git.ts';

/** Where the native puts worktrees, relative to the repository's top level (2.1.332). */
export const WORKTREE_DIR = '.claude/worktrees';
/** The native's branch name for worktree <name>. */
export const WORKTREE_BRANCH_PREFIX = 'worktree-';

export interface WorktreePlace {
  readonly name: string;
  /** The repository's main top level (where .claude/worktrees lives). */
  readonly repository: string;
  readonly path: string;
  readonly branch: string;
}

export function worktreePlace(repository: string, name: string): WorktreePlace {
  return { name, repository, path: `${repository}/${WORKTREE_DIR}/${name}`, branch: `${WORKTREE_BRANCH_PREFIX}${name}` };
}

const IN_WORKTREE = /^(.+)\/\.claude\/worktrees\/([A-Za-z0-9][A-Za-z0-9_-]*)$/;

/** The worktree a native run really ran in, from its system/init cwd; null when it is not one. */
export function worktreeFromCwd(cwd: string): WorktreePlace | null {
  const match = IN_WORKTREE.exec(cwd);
  return match?.[1] === undefined || match[2] === undefined ? null : worktreePlace(match[1], match[2]);
}

/** The message of a failed git call: its code, never a caller's value. */
export function gitFailure(outcome: Exclude<GitOutcome, { ok: true }>): string {
  switch (outcome.code) {
    case 'git_not_found':
      return 'git was not found on PATH';
    case 'git_timeout':
      return 'git did not answer in time';
    case 'git_output_too_large':
      return 'git printed more than its output bound';
    case 'git_exit_nonzero':
      return `git exited ${String(outcome.exitCode)}`;
    case 'git_stopped':
      return 'the server is closing';
    case 'git_too_many_filters':
      return 'the repository configures more filter drivers than git can be started with safely';
    default:
      return assertNever(outcome.code);
  }
}

/**
 * Before a run with `worktree`: cwd must be in a git repository (not inside one of its .claude worktrees,
 * which would nest them), and neither the worktree folder nor its branch may exist (the native would reuse
 * an existing worktree silently, mixing two runs' work). Throws input errors; spawns nothing but git.
 */
export function checkWorktreeRequest(git: GitRunnerSync, cwd: string, name: string, exists: (path: string) => boolean): WorktreePlace {
  const top = git(['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'], cwd);
  if (!top.ok) {
    if (top.code === 'git_exit_nonzero')
      throw new ToolError('invalid_arguments', 'worktree needs cwd to be inside a git repository', '/worktree');
    throw new ToolError('invalid_arguments', `worktree cannot be checked: ${gitFailure(top)}`, '/worktree');
  }
  const [toplevel] = top.stdout.split('\n');
  if (toplevel === undefined || toplevel === '')
    throw new ToolError('invalid_arguments', 'worktree needs cwd to be inside a git work tree (not a bare repository)', '/worktree');
  if (worktreeFromCwd(toplevel) !== null)
    throw new ToolError(
      'invalid_arguments',
      `cwd is inside a run's worktree (${WORKTREE_DIR}); pass the repository's main checkout as cwd`,
      '/worktree',
    );
  const place = worktreePlace(toplevel, name);
  if (exists(place.path))
    throw new ToolError(
      'invalid_arguments',
      `the worktree exists already under ${WORKTREE_DIR}; choose another name, or resume its conversation without worktree`,
      '/worktree',
    );
  const branch = git(['rev-parse', '--verify', '--quiet', `refs/heads/${place.branch}`], cwd);
  if (branch.ok)
    throw new ToolError(
      'invalid_arguments',
      "the worktree's branch (worktree-<name>) exists already; choose another worktree name",
      '/worktree',
    );
  const head = git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], cwd);
  if (!head.ok)
    throw new ToolError('invalid_arguments', 'worktree needs a repository with at least one commit (HEAD names none)', '/worktree');
  return place;
}
