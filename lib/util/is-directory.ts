import { statSync } from 'node:fs';

/** True when `path` names an existing directory (following symlinks); never throws. */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
