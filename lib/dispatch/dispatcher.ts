/**
 * Per-connection protocol state and dispatch for both eras on one process: the legacy lifecycle
 * (initialize first, one negotiated date, batching by date) and the modern 2026-07-28 requests, each
 * served on its own `_meta` without any handshake and without changing the legacy state (a discover
 * never pins the process). Also cancellation, and the mapping of handler outcomes to responses.
 *
 * Order of checks for a legacy request: envelope → closing → duplicate in-flight id → method lookup →
 * initialized → params shape → handler. For a modern one (its params._meta names a protocol version):
 * envelope → closing → duplicate id → params shape → _meta (-32602 / -32022) → method lookup under that
 * date → handler, and the result gains resultType and serverInfo. A duplicate id (a request whose id is
 * still in flight) is answered -32600 with that id and the original request continues. A cancelled
 * request gets no response at all. Responses from the client are ignored: this server never sends requests.
 */
import type { ResourceProvider, ToolProvider } from '../contracts/providers.ts';
import { assertNever } from '../util/assert-never.ts';
import type { Clock } from '../util/clock.ts';
import type { JsonObject } from '../util/json.ts';
import { ABORT_REASONS, type RequestHandler } from '../handlers/context.ts';
import { initialize, type ServerInfo } from '../handlers/initialize.ts';
import { createOutbound, type Outbound } from '../rpc/outbound.ts';
import { getRequestHandler, METHODS_BEFORE_INITIALIZE } from '../handlers/methods.ts';
import { classifyMessage, idKey, isRequestId, type Params } from '../rpc/envelope.ts';
import { errorResponse, isRpcError, rpcErrors, type RequestId, type RpcError } from '../rpc/errors.ts';
import { isModernRequest, readModernMeta, withModernResultFields, type ModernRequestMeta } from '../rpc/modern.ts';
import { eraFeatures, features, LATEST_PROTOCOL_VERSION, type AnyProtocolVersion, type ProtocolVersion } from '../rpc/negotiate.ts';
import { createProgressReporter, getProgressToken } from '../rpc/progress.ts';

/** close() waits at most this long for aborted in-flight requests to settle. */
export const CLOSE_SETTLE_MS = 2000;

export interface DispatcherOptions {
  readonly toolProvider: ToolProvider;
  readonly resourceProvider: ResourceProvider;
  readonly serverInfo: ServerInfo;
  /** Advisory notifications (progress); the transport may drop them. */
  readonly notify: (notification: JsonObject) => void;
  readonly log: (line: string) => void;
  readonly clock: Clock;
  readonly closeSettleMs?: number;
  /** Requests to the client (elicitation/create); never dropped. Without it nothing is ever asked. */
  readonly send?: (message: JsonObject) => void;
}

export interface DispatcherState {
  readonly protocolVersion: ProtocolVersion | null;
  readonly closing: boolean;
  readonly inFlight: number;
}

export interface Dispatcher {
  /** One parsed message (or batch) in; the response (or array of responses) out, undefined when none. */
  handle(message: unknown): Promise<unknown>;
  /** Refuses new requests, aborts in-flight ones and waits (bounded) for them to settle. */
  close(): Promise<void>;
  state(): DispatcherState;
}

interface InFlight {
  readonly method: string;
  readonly controller: AbortController;
  readonly stopProgress: () => void;
  cancelled: boolean;
}

/** Everything one connection's dispatcher knows; the phases below (route, legacy, modern, execute, close) work on it. */
interface DispatcherCore {
  readonly options: DispatcherOptions;
  readonly inFlight: Map<string, InFlight>;
  /** Every request not yet answered, also one no longer in inFlight (cancelled): close() waits for these. */
  readonly running: Set<Promise<unknown>>;
  readonly outbound: Outbound | null;
  negotiated: ProtocolVersion | null;
  closing: boolean;
  // Legacy era only, and only when the client declared it at initialize (form mode is implied by `{}`).
  clientElicits: boolean;
}

/** One request on its way to its handler, after the checks of its era. */
interface HandlerCall {
  readonly id: RequestId;
  readonly key: string;
  readonly method: string;
  readonly handler: RequestHandler;
  readonly args: Record<string, unknown>;
  readonly version: AnyProtocolVersion;
  readonly tasks: boolean;
  readonly legacy: boolean;
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const s: DispatcherCore = {
    options,
    inFlight: new Map(),
    running: new Set(),
    outbound: options.send === undefined ? null : createOutbound(options.send),
    negotiated: null,
    closing: false,
    clientElicits: false,
  };
  return {
    handle: (message) => (Array.isArray(message) ? handleBatch(s, message) : handleOne(s, message)),
    close: () => closeDispatcher(s),
    state: () => ({ protocolVersion: s.negotiated, closing: s.closing, inFlight: s.inFlight.size }),
  };
}

const fail = (id: RequestId | null, error: RpcError): unknown => errorResponse(id, error.toObject());

function handleOne(s: DispatcherCore, message: unknown): Promise<unknown> {
  const envelope = classifyMessage(message);
  switch (envelope.kind) {
    case 'invalid':
      // A malformed answer to one of our own requests (no result or error, or no jsonrpc) fails that request.
      if (!hasMethod(message) && s.outbound?.onResponse(message) === true) return Promise.resolve(undefined);
      return Promise.resolve(fail(envelope.id, envelope.idOutOfRange ? rpcErrors.idOutOfRange() : rpcErrors.invalidRequest()));
    case 'invalid-notification':
      s.options.log(`ignored an invalid notification${envelope.method === null ? '' : ` ${JSON.stringify(envelope.method.slice(0, 64))}`}`);
      return Promise.resolve(undefined);
    case 'response':
      s.outbound?.onResponse(message);
      return Promise.resolve(undefined);
    case 'notification':
      onNotification(s, envelope.method, envelope.params);
      return Promise.resolve(undefined);
    case 'request': {
      const pending = runRequest(s, envelope.id, envelope.method, envelope.params);
      s.running.add(pending);
      const forget = (): void => {
        s.running.delete(pending);
      };
      pending.then(forget, forget);
      return pending;
    }
    default:
      return assertNever(envelope);
  }
}

async function handleBatch(s: DispatcherCore, batch: readonly unknown[]): Promise<unknown> {
  if (s.negotiated === null || !features.batching(s.negotiated)) return fail(null, rpcErrors.batchNotSupported());
  if (batch.length === 0) return fail(null, rpcErrors.emptyBatch());
  const responses = (await Promise.all(batch.map((message) => handleOne(s, message)))).filter((response) => response !== undefined);
  return responses.length === 0 ? undefined : responses;
}

function onNotification(s: DispatcherCore, method: string, params: Params): void {
  if (method !== 'notifications/cancelled' || params === undefined || Array.isArray(params)) return;
  const requestId = (params as Record<string, unknown>)['requestId'];
  if (!isRequestId(requestId)) return;
  const entry = s.inFlight.get(idKey(requestId));
  // initialize cannot be cancelled (MCP lifecycle rule); unknown or finished ids are a tolerated race.
  if (entry === undefined || entry.method === 'initialize') return;
  entry.cancelled = true;
  entry.stopProgress();
  s.inFlight.delete(idKey(requestId));
  entry.controller.abort(ABORT_REASONS.cancelled);
}

async function runRequest(s: DispatcherCore, id: RequestId, method: string, params: Params): Promise<unknown> {
  if (s.closing) return fail(id, rpcErrors.closing());
  const key = idKey(id);
  if (s.inFlight.has(key)) return fail(id, rpcErrors.duplicateId());
  // initialize is the legacy handshake whatever its _meta says; it never selects the modern era.
  if (method !== 'initialize' && isModernRequest(params)) return runModern(s, id, key, method, params);
  return runLegacy(s, id, key, method, params);
}

/** Returns a response, or the promise of one from the handler: no promise of its own, so no extra turn. */
function runLegacy(s: DispatcherCore, id: RequestId, key: string, method: string, params: Params): unknown {
  const legacyVersion = s.negotiated ?? LATEST_PROTOCOL_VERSION;
  const handler = getRequestHandler(method, legacyVersion);
  if (handler === undefined && method !== 'initialize') return fail(id, rpcErrors.methodNotFound());
  if (s.negotiated === null && !METHODS_BEFORE_INITIALIZE.has(method)) return fail(id, rpcErrors.notInitialized());
  if (Array.isArray(params)) return fail(id, rpcErrors.invalidParams('params must be an object'));
  const args = (params ?? {}) as Record<string, unknown>;
  if (method === 'initialize') return runInitialize(s, id, args);
  if (handler === undefined) return fail(id, rpcErrors.methodNotFound());
  // Only ping runs before initialize; it does not depend on the date.
  return execute(s, { id, key, method, handler, args, version: legacyVersion, tasks: false, legacy: true });
}

function runInitialize(s: DispatcherCore, id: RequestId, args: Record<string, unknown>): unknown {
  if (s.negotiated !== null) return fail(id, rpcErrors.alreadyInitialized());
  const result = initialize(args, s.options.serverInfo);
  s.negotiated = result.protocolVersion;
  s.clientElicits = declaresFormElicitation(args['capabilities']);
  return { jsonrpc: '2.0', id, result };
}

/** 2026-07-28: no handshake and no connection state; the request's own _meta decides everything. */
async function runModern(s: DispatcherCore, id: RequestId, key: string, method: string, params: Params): Promise<unknown> {
  if (Array.isArray(params)) return fail(id, rpcErrors.invalidParams('params must be an object'));
  const args = (params ?? {}) as Record<string, unknown>;
  let meta: ModernRequestMeta;
  try {
    meta = readModernMeta(args);
  } catch (error) {
    if (isRpcError(error)) return fail(id, error);
    throw error;
  }
  const handler = getRequestHandler(method, meta.version);
  if (handler === undefined) return fail(id, rpcErrors.methodNotFound());
  return execute(s, { id, key, method, handler, args, version: meta.version, tasks: meta.tasks, legacy: false });
}

async function execute(s: DispatcherCore, call: HandlerCall): Promise<unknown> {
  const { id, key, method, args, version } = call;
  const { toolProvider, resourceProvider, serverInfo, notify, log } = s.options;
  const outbound = s.outbound;
  const elicit =
    call.legacy && s.clientElicits && outbound !== null
      ? (params: JsonObject, signal: AbortSignal): Promise<JsonObject> => outbound.request('elicitation/create', params, signal)
      : undefined;
  const progress = createProgressReporter(getProgressToken(args), version, notify);
  const entry: InFlight = { method, controller: new AbortController(), stopProgress: progress.stop, cancelled: false };
  s.inFlight.set(key, entry);
  try {
    const result = await call.handler(args, {
      protocolVersion: version,
      toolProvider,
      resourceProvider,
      serverInfo,
      tasks: call.tasks,
      signal: entry.controller.signal,
      progress: progress.report,
      log,
      elicit,
    });
    if (entry.cancelled) return undefined;
    return { jsonrpc: '2.0', id, result: eraFeatures.resultType(version) ? withModernResultFields(result, serverInfo) : result };
  } catch (error) {
    if (entry.cancelled) return undefined;
    if (isRpcError(error)) return fail(id, error);
    log(`internal error in ${method}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return fail(id, rpcErrors.internal());
  } finally {
    progress.stop();
    if (s.inFlight.get(key) === entry) s.inFlight.delete(key);
  }
}

async function closeDispatcher(s: DispatcherCore): Promise<void> {
  s.closing = true;
  s.outbound?.close();
  for (const entry of s.inFlight.values()) entry.controller.abort(ABORT_REASONS.closing);
  if (s.running.size === 0) return;
  let cancelTimer: () => void = () => {};
  const timeout = new Promise<void>((resolve) => {
    cancelTimer = s.options.clock.setTimeout(resolve, s.options.closeSettleMs ?? CLOSE_SETTLE_MS);
  });
  await Promise.race([Promise.allSettled([...s.running]), timeout]);
  cancelTimer();
}

/** `capabilities.elicitation` as an object: `{}` (form implied) or one that names `form`. */
function declaresFormElicitation(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const elicitation = (capabilities as Record<string, unknown>)['elicitation'];
  if (typeof elicitation !== 'object' || elicitation === null || Array.isArray(elicitation)) return false;
  const keys = Object.keys(elicitation);
  return keys.length === 0 || keys.includes('form');
}

function hasMethod(message: unknown): boolean {
  return typeof message === 'object' && message !== null && Object.hasOwn(message, 'method');
}
