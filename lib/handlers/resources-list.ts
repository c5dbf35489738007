/** resources/list: the provider's resources, shaped for the negotiated date. */
import type { ResourceDescriptor } from '../contracts/providers.ts';
import { eraFeatures, features, type AnyProtocolVersion } from '../rpc/negotiate.ts';
import { CACHE_HINTS } from '../rpc/modern.ts';
import type { HandlerContext } from './context.ts';

export function resourcesList(_params: Record<string, unknown>, ctx: HandlerContext): { resources: Record<string, unknown>[] } {
  const resources = ctx.resourceProvider.list().map((resource) => toWireResource(resource, ctx.protocolVersion));
  return eraFeatures.cacheableResults(ctx.protocolVersion) ? { resources, ...CACHE_HINTS } : { resources };
}

export function toWireResource(resource: ResourceDescriptor, version: AnyProtocolVersion): Record<string, unknown> {
  const wire: Record<string, unknown> = { uri: resource.uri, name: resource.name };
  if (resource.title !== undefined && features.titles(version)) wire['title'] = resource.title;
  wire['description'] = resource.description;
  wire['mimeType'] = resource.mimeType;
  return wire;
}
