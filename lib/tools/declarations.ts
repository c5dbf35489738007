/**
 * Per-tool declarations: the computer-mcp `_meta` keys and the matching standard MCP annotations.
 * Risk is a minimum classification the host applies; annotations stay hints.
 *
 * Continuation shape (tools that take an existing run_id):
 *   { format_version: 1, selector: { kind: 'claude.run', resource_id: { json_pointer: '/run_id' } } }
 * The pointer is evaluated against the tools/call `arguments` object. New work (run, start) and the
 * unscoped listing carry no continuation: they claim no existing owner.
 */
import type { JsonObject } from '../util/json.ts';
import type { ToolAnnotations } from '../contracts/providers.ts';
import { WORK_FORMAT_VERSION, WORK_URI } from '../runs/work-snapshot.ts';

export const TOOL_NAMES = [
  'claude.run',
  'claude.run.start',
  'claude.run.list',
  'claude.run.result',
  'claude.run.events',
  'claude.run.cancel',
  'claude.run.release',
  'claude.run.send',
  'claude.run.close',
  'claude.run.answer',
  'claude.worktree.remove',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export const META_RISK = 'io.github.computer-mcp/risk';
export const META_WORK = 'io.github.computer-mcp/work';
export const META_CONTINUATION = 'io.github.computer-mcp/continuation';

export type ToolRisk = 'full-shell' | 'read-only' | 'destructive';

interface Declaration {
  readonly risk: ToolRisk;
  readonly takesRunId: boolean;
  readonly annotations: Required<Omit<ToolAnnotations, 'title'>>;
}

const DECLARATIONS = {
  // Model execution: native tools can do anything the user can; not a sandbox.
  'claude.run': {
    risk: 'full-shell',
    takesRunId: false,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  'claude.run.start': {
    risk: 'full-shell',
    takesRunId: false,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  'claude.run.list': {
    risk: 'read-only',
    takesRunId: false,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  'claude.run.result': {
    risk: 'read-only',
    takesRunId: true,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  'claude.run.events': {
    risk: 'read-only',
    takesRunId: true,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  // Repeating a cancel or release has no further effect, hence idempotent.
  'claude.run.cancel': {
    risk: 'destructive',
    takesRunId: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  'claude.run.release': {
    risk: 'destructive',
    takesRunId: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  // A message is a prompt: it runs the model with every tool the run may use. Never idempotent.
  'claude.run.send': {
    risk: 'full-shell',
    takesRunId: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  // Ends the conversation (its native process exits); a repeat finds it closing or ended, hence idempotent.
  'claude.run.close': {
    risk: 'destructive',
    takesRunId: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  // Allowing lets the nested CLI run the tool use it asked about. Repeating an answer is refused (the
  // question is no longer pending), so a repeat has no further effect.
  'claude.run.answer': {
    risk: 'destructive',
    takesRunId: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  // Deletes a run's worktree and branch: the work product. Refused when that would lose work unless forced;
  // a repeat finds nothing to remove (worktree_not_found), hence idempotent.
  'claude.worktree.remove': {
    risk: 'destructive',
    takesRunId: false,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
} as const satisfies Record<ToolName, Declaration>;

/** Fresh `_meta` object for tools/list: risk and work on every tool, continuation on run_id tools. */
export function toolMeta(name: ToolName): JsonObject {
  const declaration: Declaration = DECLARATIONS[name];
  const meta: JsonObject = {
    [META_RISK]: declaration.risk,
    [META_WORK]: { format_version: WORK_FORMAT_VERSION, uri: WORK_URI },
  };
  if (declaration.takesRunId) {
    meta[META_CONTINUATION] = {
      format_version: 1,
      selector: { kind: 'claude.run', resource_id: { json_pointer: '/run_id' } },
    };
  }
  return meta;
}

/** Fresh standard annotations matching the risk (hints only). */
export function toolAnnotations(name: ToolName): ToolAnnotations {
  return { ...DECLARATIONS[name].annotations };
}

/** The advertised name: dotted by default, underscores for clients that reject dots. */
export function toWireName(name: ToolName, underscore: boolean): string {
  return underscore ? name.replaceAll('.', '_') : name;
}

/** Maps an advertised name back to the canonical tool, or null. Accepts only the active spelling. */
export function fromWireName(wireName: string, underscore: boolean): ToolName | null {
  for (const name of TOOL_NAMES) if (toWireName(name, underscore) === wireName) return name;
  return null;
}
