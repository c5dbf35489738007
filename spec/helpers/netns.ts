/** What network the test process sees; scripts/netns-run.mjs sets NETNS_ENV_VAR for its children. */
import { readFileSync } from 'node:fs';

export const NETNS_ENV_VAR = 'CLAUDE_RUN_MCP_NETNS';

export interface NetworkView {
  /** Interface names of this process's network namespace (/proc/net is per namespace; /sys/class/net is not). */
  readonly interfaces: readonly string[];
  /** Only loopback exists: no packet can leave the machine. */
  readonly loopbackOnly: boolean;
  /** netns-run.mjs said it isolated us ('1'), could not ('0'), or was not used (undefined). */
  readonly runnerClaim: string | undefined;
}

export function networkView(env: Readonly<Record<string, string | undefined>>): NetworkView {
  const interfaces = readFileSync('/proc/net/dev', 'utf8')
    .split('\n')
    .slice(2)
    .map((line) => line.split(':')[0]?.trim() ?? '')
    .filter((name) => name !== '');
  return { interfaces, loopbackOnly: interfaces.length === 1 && interfaces[0] === 'lo', runnerClaim: env[NETNS_ENV_VAR] };
}
