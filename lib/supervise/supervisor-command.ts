/** How the adapter starts a supervisor child, from source (tsx) or from the single-file bundle. */
import { fileURLToPath } from 'node:url';

export interface SupervisorCommand {
  readonly file: string;
  readonly args: readonly string[];
}

/** The bundle's main dispatches this argv[2] to runSupervisor(). */
export const SUPERVISOR_ARGV_FLAG = '__supervisor';

/**
 * From source (this module is a .ts file) run lib/supervisor/main.ts under tsx, resolved absolutely so the
 * adapter's cwd does not matter; bundled (.mjs) re-run the bundle itself with the dispatch flag.
 */
export function getSupervisorCommand(moduleUrl: string = import.meta.url): SupervisorCommand {
  if (moduleUrl.endsWith('.ts')) {
    return {
      file: process.execPath,
      args: ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL('../supervisor/main.ts', moduleUrl))],
    };
  }
  return { file: process.execPath, args: [fileURLToPath(moduleUrl), SUPERVISOR_ARGV_FLAG] };
}
