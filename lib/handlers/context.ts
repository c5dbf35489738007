/** What every request handler receives besides its params. Handlers never touch stdio or process.*. */
import type { ResourceProvider, ToolProvider } from '../contracts/providers.ts';
import type { AnyProtocolVersion } from '../rpc/negotiate.ts';
import type { JsonObject } from '../util/json.ts';

export interface HandlerContext {
  /** The negotiated legacy date, or the modern date this very request named. */
  readonly protocolVersion: AnyProtocolVersion;
  readonly toolProvider: ToolProvider;
  readonly resourceProvider: ResourceProvider;
  readonly serverInfo: { readonly name: string; readonly version: string };
  /** This request declared the tasks extension in its own _meta (modern era only; never inferred from earlier requests). */
  readonly tasks: boolean;
  /** Aborted on notifications/cancelled (reason ABORT_REASONS.cancelled) or server close (.closing). */
  readonly signal: AbortSignal;
  /** Present when the request carried _meta.progressToken. */
  readonly progress: ((message: string) => void) | undefined;
  /** Diagnostics to stderr; never part of a response. */
  readonly log: (line: string) => void;
  /** Present when a legacy client declared form elicitation at initialize: asks the person at the client. */
  readonly elicit?: ElicitFn | undefined;
}

/** Sends elicitation/create; resolves with the client's result, rejects when it fails, is withdrawn or closed. */
export type ElicitFn = (params: JsonObject, signal: AbortSignal) => Promise<JsonObject>;

/** A request handler: params in, result out, or throw an RpcError for a protocol problem. */
export type RequestHandler = (params: Record<string, unknown>, ctx: HandlerContext) => unknown;

/** The reason an in-flight request's signal was aborted. */
export const ABORT_REASONS = {
  cancelled: 'cancelled',
  closing: 'server_closing',
} as const;
