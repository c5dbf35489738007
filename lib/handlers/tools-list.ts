/** tools/list: the provider's tools in the provider's (deterministic) order, shaped for the request's date. */
import type { ToolDefinition } from '../contracts/providers.ts';
import { eraFeatures, features, type AnyProtocolVersion } from '../rpc/negotiate.ts';
import { CACHE_HINTS } from '../rpc/modern.ts';
import type { HandlerContext } from './context.ts';

export function toolsList(_params: Record<string, unknown>, ctx: HandlerContext): { tools: Record<string, unknown>[] } {
  const tools = ctx.toolProvider.list().map((tool) => toWireTool(tool, ctx.protocolVersion));
  return eraFeatures.cacheableResults(ctx.protocolVersion) ? { tools, ...CACHE_HINTS } : { tools };
}

/** Fields a date does not know are left out: older clients never see outputSchema, title or annotations. */
export function toWireTool(tool: ToolDefinition, version: AnyProtocolVersion): Record<string, unknown> {
  const wire: Record<string, unknown> = { name: tool.name };
  if (features.titles(version)) wire['title'] = tool.title;
  wire['description'] = tool.description;
  wire['inputSchema'] = tool.inputSchema;
  if (tool.outputSchema !== undefined && features.structuredContent(version)) wire['outputSchema'] = tool.outputSchema;
  if (features.toolAnnotations(version)) wire['annotations'] = tool.annotations;
  // _meta carries the risk/work declarations every host needs, whatever the date.
  wire['_meta'] = tool._meta;
  return wire;
}
