/**
 * Entry of the permission bridge from source (`node --import tsx lib/permission/bridge-main.ts`); the
 * bundle instead calls runPermissionBridge() when its argv[2] is `__permission-bridge`.
 */
import { isDirectScript } from '../util/direct-script.ts';
import { runPermissionBridge } from './bridge.ts';

if (isDirectScript(import.meta.url, /\/lib\/permission\/bridge-main\.[cm]?[jt]s$/, process.argv[1])) runPermissionBridge();
