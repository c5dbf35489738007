/**
 * The request methods this server answers, besides `initialize` (which changes connection state and is
 * therefore handled by the dispatcher itself), with the dates each exists in (from the features table).
 * A method missing here, or not available under the request's date, is -32601.
 */
import { eraFeatures, type AnyProtocolVersion } from '../rpc/negotiate.ts';
import type { RequestHandler } from './context.ts';
import { discover } from './discover.ts';
import { ping } from './ping.ts';
import { resourcesList } from './resources-list.ts';
import { resourcesRead } from './resources-read.ts';
import { tasksCancel, tasksGet, tasksUpdate } from './tasks.ts';
import { toolsCall } from './tools-call.ts';
import { toolsList } from './tools-list.ts';

const always = (): boolean => true;

export const REQUEST_HANDLERS = {
  'ping': { handler: ping, available: eraFeatures.ping },
  'server/discover': { handler: discover, available: eraFeatures.perRequestMeta },
  'tools/list': { handler: toolsList, available: always },
  'tools/call': { handler: toolsCall, available: always },
  'resources/list': { handler: resourcesList, available: always },
  'resources/read': { handler: resourcesRead, available: always },
  'tasks/get': { handler: tasksGet, available: eraFeatures.tasksExtension },
  'tasks/cancel': { handler: tasksCancel, available: eraFeatures.tasksExtension },
  'tasks/update': { handler: tasksUpdate, available: eraFeatures.tasksExtension },
} as const satisfies Record<string, { handler: RequestHandler; available: (v: AnyProtocolVersion) => boolean }>;

export type RequestMethod = keyof typeof REQUEST_HANDLERS;

/** Answered before initialize as well (legacy era). */
export const METHODS_BEFORE_INITIALIZE: ReadonlySet<string> = new Set(['initialize', 'ping']);

export function getRequestHandler(method: string, version: AnyProtocolVersion): RequestHandler | undefined {
  if (!Object.hasOwn(REQUEST_HANDLERS, method)) return undefined;
  const entry = REQUEST_HANDLERS[method as RequestMethod];
  return entry.available(version) ? entry.handler : undefined;
}
