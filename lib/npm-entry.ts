/**
 * The npm package's library (`import` and `require` of 'claude-run-mcp'). The single-file bundle
 * dist/claude-run-mcp.cjs exports it when required as a module (lib/main.ts); dist/index.mjs is a few-line ES
 * module face over that bundle. Everything lib/index.ts exports, with one difference: compiled,
 * createClaudeRunAdapter starts its supervisors from the bundle (`node claude-run-mcp.cjs __supervisor`).
 * From source (this file is .ts) the usual default applies.
 */
import { fileURLToPath } from 'node:url';
import { createClaudeRunAdapter as createFromSource, type ClaudeRunAdapterOptions } from './library.ts';
import type { Adapter } from './adapter.ts';
import { SUPERVISOR_ARGV_FLAG, type SupervisorCommand } from './supervisor/parent/supervisor-command.ts';

export * from './index.ts';

/** The single-file bundle's name; the library runs inside it, and the ES module face sits beside it. */
export const BUNDLE_FILE_NAME = 'claude-run-mcp.cjs';

/** The supervisor command of the compiled package: the bundle in its supervisor role; null from source. */
export function getPackagedSupervisorCommand(moduleUrl: string = import.meta.url): SupervisorCommand | null {
  if (moduleUrl.endsWith('.ts')) return null;
  return { file: process.execPath, args: [fileURLToPath(new URL(`./${BUNDLE_FILE_NAME}`, moduleUrl)), SUPERVISOR_ARGV_FLAG] };
}

/** lib/library.ts's createClaudeRunAdapter; when compiled, supervisorCommand defaults to the bundle. */
export function createClaudeRunAdapter(options: ClaudeRunAdapterOptions = {}): Adapter {
  const packaged = options.supervisorCommand === undefined ? getPackagedSupervisorCommand() : null;
  return createFromSource(packaged === null ? options : { ...options, supervisorCommand: packaged });
}
