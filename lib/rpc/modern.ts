/**
 * The 2026-07-28 request envelope: which requests belong to the modern era, what their `_meta` must
 * carry (checked on every request, nothing remembered between requests), and the fields every modern
 * result carries. Pure: no state, no effects.
 */
import { isPlainObject, type JsonObject } from '../util/json.ts';
import { escapePointerToken } from '../util/json-pointer.ts';
import { rpcErrors } from './errors.ts';
import { ALL_PROTOCOL_VERSIONS, isModernVersion, type ModernProtocolVersion } from './negotiate.ts';

export const META_KEYS = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/** The tasks extension's identifier, in client and server capabilities alike. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * Cache hints of lists and reads. 0 ("stale at once") and private: the work snapshot changes with every
 * run, and the tool list depends on this process's options, which may differ at the next launch.
 */
export const CACHE_HINTS = { ttlMs: 0, cacheScope: 'private' } as const;

/** What one modern request declared about itself. */
export interface ModernRequestMeta {
  readonly version: ModernProtocolVersion;
  /** clientCapabilities.extensions["io.modelcontextprotocol/tasks"] is declared on this very request. */
  readonly tasks: boolean;
}

const DATE_SHAPE = /^\d{4}-\d{2}-\d{2}$/;
const pointer = (key: string): string => `/_meta/${escapePointerToken(key)}`;

/**
 * A request is modern exactly when its `_meta` names a protocol version (whatever the value: a bad one is
 * that request's error). Without one it is a legacy request, so a bare `server/discover` is -32601 as it
 * always was, and a legacy client is never asked for modern metadata.
 */
export function isModernRequest(params: unknown): boolean {
  if (!isPlainObject(params)) return false;
  const meta = params['_meta'];
  return isPlainObject(meta) && Object.hasOwn(meta, META_KEYS.protocolVersion);
}

/**
 * Validates the per-request fields: -32602 for a missing or malformed key (data.path names it, the value
 * is never echoed), -32022 for a well-formed date this server does not serve per request.
 */
export function readModernMeta(params: Record<string, unknown>): ModernRequestMeta {
  const meta = params['_meta'];
  if (!isPlainObject(meta))
    throw rpcErrors.invalidParams('/_meta must be an object carrying the protocol version and client capabilities', '/_meta');

  const version = meta[META_KEYS.protocolVersion];
  const versionPath = pointer(META_KEYS.protocolVersion);
  if (typeof version !== 'string') throw rpcErrors.invalidParams(`${versionPath} is required and must be a string`, versionPath);
  if (!DATE_SHAPE.test(version)) throw rpcErrors.invalidParams(`${versionPath} must be a protocol date (YYYY-MM-DD)`, versionPath);
  if (!isModernVersion(version)) throw rpcErrors.unsupportedVersion(ALL_PROTOCOL_VERSIONS, version);

  const info = meta[META_KEYS.clientInfo];
  const infoPath = pointer(META_KEYS.clientInfo);
  if (info !== undefined && !(isPlainObject(info) && typeof info['name'] === 'string' && typeof info['version'] === 'string')) {
    throw rpcErrors.invalidParams(`${infoPath} must be an object with string name and version`, infoPath);
  }

  const capabilities = meta[META_KEYS.clientCapabilities];
  const capabilitiesPath = pointer(META_KEYS.clientCapabilities);
  if (!isPlainObject(capabilities))
    throw rpcErrors.invalidParams(`${capabilitiesPath} is required and must be an object`, capabilitiesPath);
  const extensions = capabilities['extensions'];
  if (extensions !== undefined && !isPlainObject(extensions)) {
    throw rpcErrors.invalidParams(`${capabilitiesPath}/extensions must be an object`, `${capabilitiesPath}/extensions`);
  }
  const tasks = isPlainObject(extensions) && isPlainObject(extensions[TASKS_EXTENSION]);
  return { version, tasks };
}

/** The capability a task method needs, as -32021 names it. */
export function requiredTasksCapability(): JsonObject {
  return { extensions: { [TASKS_EXTENSION]: {} } };
}

/** Adds what every modern result carries: resultType ("complete" unless the handler chose one) and serverInfo in _meta. */
export function withModernResultFields(
  result: unknown,
  serverInfo: { readonly name: string; readonly version: string },
): Record<string, unknown> {
  const body = isPlainObject(result) ? result : {};
  const meta = isPlainObject(body['_meta']) ? body['_meta'] : {};
  return {
    resultType: typeof body['resultType'] === 'string' ? body['resultType'] : 'complete',
    ...body,
    _meta: { ...meta, [META_KEYS.serverInfo]: { name: serverInfo.name, version: serverInfo.version } },
  };
}
