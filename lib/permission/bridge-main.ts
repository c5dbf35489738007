/**
 * Entry of the permission bridge from source (`node --import tsx lib/permission/bridge-main.ts`); the
 * bundle instead calls runPermissionBridge() when its argv[2] is `__permission-bridge`.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runPermissionBridge } from './bridge.ts';

function isDirectScript(): boolean {
  const self = import.meta.url;
  const script = process.argv[1];
  if (!self.startsWith('file:') || !/\/lib\/permission\/bridge-main\.[cm]?[jt]s$/.test(self) || script === undefined) return false;
  try {
    return realpathSync(fileURLToPath(self)) === realpathSync(script);
  } catch {
    return false;
  }
}

if (isDirectScript()) runPermissionBridge();
