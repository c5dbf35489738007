/**
 * server/discover (2026-07-28): every date served, the capabilities (with the tasks extension), the
 * instructions. Answered at once and without state: a discover never pins the process to an era, so a
 * client that falls back to `initialize` afterwards still gets the legacy handshake.
 */
import { ALL_PROTOCOL_VERSIONS } from '../rpc/negotiate.ts';
import { CACHE_HINTS, TASKS_EXTENSION } from '../rpc/modern.ts';
import type { HandlerContext } from './context.ts';
import { SERVER_CAPABILITIES, SERVER_INSTRUCTIONS } from './initialize.ts';

export function discover(_params: Record<string, unknown>, ctx: HandlerContext): Record<string, unknown> {
  const capabilities: Record<string, unknown> = {
    tools: { ...SERVER_CAPABILITIES.tools },
    resources: { ...SERVER_CAPABILITIES.resources },
  };
  if (ctx.toolProvider.tasks !== undefined) capabilities['extensions'] = { [TASKS_EXTENSION]: {} };
  return {
    supportedVersions: [...ALL_PROTOCOL_VERSIONS],
    capabilities,
    instructions: SERVER_INSTRUCTIONS,
    ...CACHE_HINTS,
  };
}
