/**
 * Entry of the supervisor child process. From source it runs as a script
 * (`node --import tsx lib/supervisor/child/main.ts`); the bundle instead calls runSupervisor() when its own
 * argv[2] is `__supervisor`, and importing this module there must not start a supervisor.
 */
import { isDirectScript } from '../../util/direct-script.ts';
import { runSupervisor } from './supervisor.ts';

export { runSupervisor };

if (isDirectScript(import.meta.url, /\/lib\/supervisor\/child\/main\.[cm]?[jt]s$/, process.argv[1])) runSupervisor();
