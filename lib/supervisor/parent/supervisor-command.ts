/** How the adapter starts a supervisor child, from source (tsx) or from the single-file bundle. */
import { RESERVED_ENV_PREFIX } from '../../native/native-env.ts';
import { fileURLToPath } from 'node:url';

export interface SupervisorCommand {
  readonly file: string;
  readonly args: readonly string[];
}

/** The bundle's main dispatches this argv[2] to runSupervisor(). */
export const SUPERVISOR_ARGV_FLAG = '__supervisor';

/**
 * From source (this module is a .ts file) run lib/supervisor/child/main.ts under tsx, resolved absolutely so the
 * adapter's cwd does not matter; bundled (.cjs) re-run the bundle itself with the dispatch flag.
 */
export function getSupervisorCommand(moduleUrl: string = import.meta.url): SupervisorCommand {
  if (moduleUrl.endsWith('.ts')) {
    return {
      file: process.execPath,
      args: ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL('../child/main.ts', moduleUrl))],
    };
  }
  return { file: process.execPath, args: [fileURLToPath(moduleUrl), SUPERVISOR_ARGV_FLAG] };
}

/**
 * Adapter environment variables the supervisor must not see. It spawns the native process with an explicit
 * environment, so it needs none of these: NODE_OPTIONS could preload code that writes on its data pipe,
 * NODE_EXTRA_CA_CERTS costs Node 20 a certificate load at every start, and reserved host metadata stays
 * out of every process the adapter starts.
 */
const SUPERVISOR_ENV_DROPPED = ['NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS'] as const;

/** The supervisor's own environment: the adapter's, minus what it must not or need not carry. */
export function getSupervisorEnv(adapterEnv: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(adapterEnv)) {
    if (
      value === undefined ||
      (SUPERVISOR_ENV_DROPPED as readonly string[]).includes(key) ||
      key.toUpperCase().startsWith(RESERVED_ENV_PREFIX)
    )
      continue;
    env[key] = value;
  }
  // fd 2 is the report pipe: a process warning printed there would break a report line. The native
  // process gets its environment from the spawn message, so this never reaches it.
  env['NODE_NO_WARNINGS'] = '1';
  return env;
}
