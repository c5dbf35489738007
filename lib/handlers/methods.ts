/**
 * The request methods this server answers, besides `initialize` (which changes session state and is
 * therefore handled by the session itself). A method missing here is -32601.
 */
import type { RequestHandler } from './context.ts';
import { ping } from './ping.ts';
import { resourcesList } from './resources-list.ts';
import { resourcesRead } from './resources-read.ts';
import { toolsCall } from './tools-call.ts';
import { toolsList } from './tools-list.ts';

export const REQUEST_HANDLERS = {
  ping,
  'tools/list': toolsList,
  'tools/call': toolsCall,
  'resources/list': resourcesList,
  'resources/read': resourcesRead,
} as const satisfies Record<string, RequestHandler>;

export type RequestMethod = keyof typeof REQUEST_HANDLERS;

/** Answered before initialize as well. */
export const METHODS_BEFORE_INITIALIZE: ReadonlySet<string> = new Set(['initialize', 'ping']);

export function getRequestHandler(method: string): RequestHandler | undefined {
  return Object.hasOwn(REQUEST_HANDLERS, method) ? REQUEST_HANDLERS[method as RequestMethod] : undefined;
}
