/** Environment variable that marks a process tree started by this adapter (recursion sentinel). */
export const RECURSION_SENTINEL = 'CLAUDE_RUN_MCP_ACTIVE';
/** Host metadata that must never reach the native process. */
export const RESERVED_ENV_PREFIX = 'COMPUTER_MCP';

/** The adapter's environment minus reserved host metadata, plus the recursion sentinel and client app tag. */
export function getNativeEnv(adapterEnv: Readonly<Record<string, string | undefined>>, adapterVersion: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(adapterEnv)) {
    if (value === undefined) continue;
    if (key.toUpperCase().startsWith(RESERVED_ENV_PREFIX)) continue;
    env[key] = value;
  }
  env[RECURSION_SENTINEL] = '1';
  env['CLAUDE_AGENT_SDK_CLIENT_APP'] = `claude-run-mcp/${adapterVersion}`;
  return env;
}

export function isRecursiveLaunch(adapterEnv: Readonly<Record<string, string | undefined>>): boolean {
  const value = adapterEnv[RECURSION_SENTINEL];
  return value !== undefined && value !== '';
}
