/** resources/read: only URIs the resource provider lists can be read; failures disclose nothing about internals. */
import { rpcErrors } from '../rpc/errors.ts';
import { CACHE_HINTS } from '../rpc/modern.ts';
import { eraFeatures } from '../rpc/negotiate.ts';
import type { HandlerContext } from './context.ts';

export interface ReadResourceResult {
  readonly contents: readonly { readonly uri: string; readonly mimeType: string; readonly text: string }[];
  /** Modern era only. */
  readonly ttlMs?: number;
  readonly cacheScope?: 'public' | 'private';
}

export function resourcesRead(params: Record<string, unknown>, ctx: HandlerContext): ReadResourceResult {
  const uri = params['uri'];
  if (typeof uri !== 'string') throw rpcErrors.invalidParams('/uri must be a string', '/uri');
  const resource = ctx.resourceProvider.list().find((candidate) => candidate.uri === uri);
  if (resource === undefined)
    throw eraFeatures.resourceNotFoundIsInvalidParams(ctx.protocolVersion)
      ? rpcErrors.resourceNotFoundInvalidParams()
      : rpcErrors.resourceNotFound();
  let text: string;
  try {
    text = ctx.resourceProvider.read(uri);
  } catch (error) {
    if (isResourceError(error)) throw rpcErrors.resourceUnavailable(error.code, error.message);
    throw error;
  }
  const contents = [{ uri: resource.uri, mimeType: resource.mimeType, text }];
  return eraFeatures.cacheableResults(ctx.protocolVersion) ? { contents, ...CACHE_HINTS } : { contents };
}

// Duck-typed rather than instanceof, so a second copy of the class (another bundle) still matches.
function isResourceError(value: unknown): value is Error & { code: string } {
  return value instanceof Error && value.name === 'ResourceError' && typeof (value as { code?: unknown }).code === 'string';
}
