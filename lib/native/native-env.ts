/** Environment variable that marks a process tree started by this adapter (recursion sentinel). */
export const RECURSION_SENTINEL = 'CLAUDE_RUN_MCP_ACTIVE';
/** Host metadata that must never reach the native process. */
export const RESERVED_ENV_PREFIX = 'COMPUTER_MCP';

/**
 * Variables a running Claude Code session sets for the processes it starts (MCP servers, hooks, Bash)
 * to describe ITSELF. Inherited by a nested `claude -p`, they would make it act as part of the host's
 * session: join the host's messaging channel with the host's credential, write notes into the host's
 * folder, report the host's entry point (which switches native behaviour), its session ids, effort and
 * project. Derived from the pinned 2.1.332 binary (its MCP-server env builder, its child-session
 * variable lists, and the keys it refuses to forward as settings) and from what it hands an MCP server it starts;
 * docs/security.md explains each. What the user owns (ANTHROPIC_*, auth, cloud, proxy, CA,
 * CLAUDE_CONFIG_DIR, PATH/HOME/locale, any other CLAUDE_CODE_* setting) is kept.
 */
export const HOST_SESSION_ENV: readonly string[] = [
  'CLAUDECODE',
  'CLAUDE_CODE_ENTRYPOINT',
  'CLAUDE_CODE_SESSION_ID',
  'CLAUDE_CODE_CHILD_SESSION',
  'CLAUDE_CODE_SESSION_ATTENDED',
  'CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS',
  'CLAUDE_CODE_MESSAGING_SOCKET',
  'CLAUDE_CODE_MESSAGING_TOKEN',
  'CLAUDE_CODE_CHILD_NOTES_DIR',
  'CLAUDE_CODE_STARTER_MAY_HOLD_CONNECTOR_FILE',
  'CLAUDE_CODE_CHROME_MCP_ORG_DENIED',
  'CLAUDE_PLUGIN_FEATURE_FLAGS',
  'CLAUDE_PROJECT_DIR',
  'CLAUDE_PID',
  'CLAUDE_EFFORT',
  'AI_AGENT',
];

const HOST_SESSION_SET: ReadonlySet<string> = new Set(HOST_SESSION_ENV);

/**
 * The adapter's environment minus reserved host metadata and the host session's own variables: what any
 * process this adapter starts may see (the native, and git, lib/worktree/git.ts).
 */
export function withoutHostSession(adapterEnv: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(adapterEnv)) {
    if (value === undefined) continue;
    if (key.toUpperCase().startsWith(RESERVED_ENV_PREFIX)) continue;
    if (HOST_SESSION_SET.has(key)) continue;
    env[key] = value;
  }
  return env;
}

/**
 * The environment without the host's (withoutHostSession), plus the recursion sentinel and client app tag.
 * CLAUDE_PROJECT_DIR is not set: the native process derives its project from the run's cwd, and sets the
 * variable for its own children itself.
 */
export function getNativeEnv(adapterEnv: Readonly<Record<string, string | undefined>>, adapterVersion: string): Record<string, string> {
  const env = withoutHostSession(adapterEnv);
  env[RECURSION_SENTINEL] = '1';
  env['CLAUDE_AGENT_SDK_CLIENT_APP'] = `claude-run-mcp/${adapterVersion}`;
  return env;
}

export function isRecursiveLaunch(adapterEnv: Readonly<Record<string, string | undefined>>): boolean {
  const value = adapterEnv[RECURSION_SENTINEL];
  return value !== undefined && value !== '';
}
