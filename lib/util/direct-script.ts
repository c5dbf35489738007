/**
 * Whether an entry module is the script node was asked to run. A bundle that inlines the module carries the
 * bundle's own URL, which the module's path pattern does not match; importing the module never counts.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** moduleUrl: the module's import.meta.url; modulePath: what its URL ends with from source; script: process.argv[1]. */
export function isDirectScript(moduleUrl: string, modulePath: RegExp, script: string | undefined): boolean {
  if (!moduleUrl.startsWith('file:') || !modulePath.test(moduleUrl) || script === undefined) return false;
  try {
    return realpathSync(fileURLToPath(moduleUrl)) === realpathSync(script);
  } catch {
    return false;
  }
}
