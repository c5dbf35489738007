/** resources/read: only URIs the host lists can be read; failures disclose nothing about internals. */
import { rpcErrors } from '../rpc/errors.ts';
import type { HandlerContext } from './context.ts';

export interface ReadResourceResult {
  readonly contents: readonly { readonly uri: string; readonly mimeType: string; readonly text: string }[];
}

export function resourcesRead(params: Record<string, unknown>, ctx: HandlerContext): ReadResourceResult {
  const uri = params['uri'];
  if (typeof uri !== 'string') throw rpcErrors.invalidParams('/uri must be a string', '/uri');
  const resource = ctx.resourceHost.list().find((candidate) => candidate.uri === uri);
  if (resource === undefined) throw rpcErrors.resourceNotFound();
  let text: string;
  try {
    text = ctx.resourceHost.read(uri);
  } catch (error) {
    if (isResourceError(error)) throw rpcErrors.resourceUnavailable(error.code, error.message);
    throw error;
  }
  return { contents: [{ uri: resource.uri, mimeType: resource.mimeType, text }] };
}

// Duck-typed rather than instanceof, so a second copy of the class (another bundle) still matches.
function isResourceError(value: unknown): value is Error & { code: string } {
  return value instanceof Error && value.name === 'ResourceError' && typeof (value as { code?: unknown }).code === 'string';
}
