/** tools/list: the host's tools in the host's (deterministic) order, shaped for the negotiated date. */
import type { ToolDefinition } from '../mcp/types.ts';
import { features, type ProtocolVersion } from '../rpc/negotiate.ts';
import type { HandlerContext } from './context.ts';

export function toolsList(_params: Record<string, unknown>, ctx: HandlerContext): { tools: Record<string, unknown>[] } {
  return { tools: ctx.toolHost.list().map((tool) => toWireTool(tool, ctx.protocolVersion)) };
}

/** Fields a date does not know are left out: older clients never see outputSchema, title or annotations. */
export function toWireTool(tool: ToolDefinition, version: ProtocolVersion): Record<string, unknown> {
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
