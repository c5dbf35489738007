/**
 * What git is started with, so that it runs nothing a repository (or a run that wrote its config) chose and
 * sees nothing of the host's session. Pure. Config is passed as command-line config through the environment
 * (GIT_CONFIG_COUNT, git 2.31+): keys and values travel apart, so a driver name holding `=` stays whole, and
 * git hands it on to the git processes it starts itself.
 */
import { withoutHostSession } from '../native/native-env.ts';

/**
 * GIT_* variables kept from the server's environment: where git itself and the user's own config live. Every
 * other one (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_COMMON_DIR, GIT_OBJECT_DIRECTORY, GIT_CONFIG_PARAMETERS,
 * GIT_CONFIG_COUNT, GIT_NAMESPACE, GIT_EXTERNAL_DIFF, …) would point git at another repository or hand it
 * config and commands the server did not choose.
 */
const KEPT_GIT_ENV: ReadonlySet<string> = new Set(['GIT_EXEC_PATH', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM', 'GIT_CONFIG_NOSYSTEM']);

/** Config of every call: no fsmonitor hook or daemon, no gpg.program run to show a signature (reflog, log). */
const ALWAYS_CONFIG: readonly (readonly [string, string])[] = [
  ['core.fsmonitor', 'false'],
  ['log.showSignature', 'false'],
];

/**
 * Subcommands the product calls that never read a worktree file's content, so no filter driver can run in
 * them. Every other call (diff, status, worktree remove, and any added later) first lists and disables the
 * configured filter drivers.
 */
const READS_NO_CONTENT: ReadonlySet<string> = new Set(['--version', 'config', 'rev-parse', 'reflog', 'rev-list', 'ls-files', 'branch']);

/** Lists the filter driver settings of every config scope (reading config runs nothing). */
export const FILTER_LIST_ARGS: readonly string[] = ['config', '--null', '--name-only', '--get-regexp', '^filter\\.'];

export function needsFilterList(args: readonly string[]): boolean {
  return !READS_NO_CONTENT.has(args[0] ?? '');
}

/** Driver names from FILTER_LIST_ARGS' output: `filter.<name>.<key>` NUL …; a name may hold dots. */
export function parseFilterNames(listing: string): string[] {
  const names = new Set<string>();
  for (const key of listing.split('\0')) {
    const last = key.lastIndexOf('.');
    if (!key.startsWith('filter.') || last < 'filter.'.length) continue;
    names.add(key.slice('filter.'.length, last));
  }
  return [...names];
}

/**
 * An empty clean, smudge and process command is no filter (git's convert.c applies a driver only with a
 * non-empty command), and `required` off keeps git from failing the call for the driver it no longer has.
 * Git then reads the file as it is on disk.
 */
export function filterNeutralizing(names: readonly string[]): Array<readonly [string, string]> {
  return names.flatMap((name) => [
    [`filter.${name}.clean`, ''] as const,
    [`filter.${name}.smudge`, ''] as const,
    [`filter.${name}.process`, ''] as const,
    [`filter.${name}.required`, 'false'] as const,
  ]);
}

/** The environment of one git call: the server's without the host's or git's redirections, plus `config`. */
export function gitEnv(
  serverEnv: Readonly<Record<string, string | undefined>>,
  config: readonly (readonly [string, string])[],
): Record<string, string> {
  const env = withoutHostSession(serverEnv);
  for (const key of Object.keys(env)) if (key.startsWith('GIT_') && !KEPT_GIT_ENV.has(key)) delete env[key];
  // Messages in one language, no pager or prompt, no optional locks.
  Object.assign(env, { LC_ALL: 'C', GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat' });
  const all = [...ALWAYS_CONFIG, ...config];
  env['GIT_CONFIG_COUNT'] = String(all.length);
  all.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}
