/**
 * Entry of the supervisor child process. From source it runs as a script
 * (`node --import tsx lib/supervisor/child/main.ts`); the bundle instead calls runSupervisor() when its own
 * argv[2] is `__supervisor`, and importing this module there must not start a supervisor.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runSupervisor } from './supervisor.ts';

export { runSupervisor };

/** True only when this very file (not a bundle that inlines it) is the script node was asked to run. */
function isDirectScript(): boolean {
  const self = import.meta.url;
  const script = process.argv[1];
  if (!self.startsWith('file:') || !/\/lib\/supervisor\/child\/main\.[cm]?[jt]s$/.test(self) || script === undefined) return false;
  try {
    return realpathSync(fileURLToPath(self)) === realpathSync(script);
  } catch {
    return false;
  }
}

if (isDirectScript()) runSupervisor();
