/**
 * The library face: the whole MCP protocol core without stdio. Feed it parsed JSON-RPC messages,
 * write what it returns, and forward what it emits through onNotification (progress; advisory).
 */
import type { ResourceProvider, ToolProvider } from './contracts/providers.ts';
import type { ServerInfo } from './handlers/initialize.ts';
import { createDispatcher, type DispatcherState } from './dispatch/dispatcher.ts';
import { systemClock, type Clock } from './util/clock.ts';
import type { JsonObject } from './util/json.ts';
import { ADAPTER_VERSION } from './version.ts';

export const SERVER_INFO: ServerInfo = { name: 'claude-run-mcp', version: ADAPTER_VERSION };

export interface AdapterOptions {
  readonly toolProvider: ToolProvider;
  readonly resourceProvider: ResourceProvider;
  /** Cleanup of everything the providers own; awaited by close() after in-flight requests settled. */
  readonly onClose?: () => Promise<void>;
  /** Diagnostics (stderr in the server); defaults to discarding them. */
  readonly log?: (line: string) => void;
  readonly clock?: Clock;
  /** How long close() waits for aborted in-flight requests (default CLOSE_SETTLE_MS). */
  readonly closeSettleMs?: number;
  readonly serverInfo?: ServerInfo;
}

/**
 * The option names of 0.1.0, when the providers were called hosts (`toolHost`, `resourceHost`): still
 * accepted, so a host that vendored the library keeps working.
 */
export type LegacyAdapterOptions = Omit<AdapterOptions, 'toolProvider' | 'resourceProvider'> & {
  readonly toolHost: ToolProvider;
  readonly resourceHost: ResourceProvider;
};

export interface Adapter {
  /** A parsed JSON-RPC message (or batch array) in; the response (or array) out; undefined when none is due. */
  handle(message: unknown): Promise<unknown>;
  /**
   * Subscribes to outbound messages: notifications (progress; advisory, may be dropped) and requests to the
   * client (elicitation/create; they carry an id and must be delivered). Returns the unsubscribe function.
   */
  onNotification(listener: (notification: JsonObject) => void): () => void;
  /** Idempotent: refuses new requests, aborts in-flight ones, waits (bounded), then runs onClose. */
  close(): Promise<void>;
  state(): DispatcherState;
}

export function createAdapter(options: AdapterOptions | LegacyAdapterOptions): Adapter {
  const log = options.log ?? (() => {});
  const listeners = new Set<(notification: JsonObject) => void>();
  const emit = (message: JsonObject): void => {
    for (const listener of listeners) {
      try {
        listener(message);
      } catch (error) {
        log(`notification listener failed: ${String(error)}`);
      }
    }
  };
  const dispatcher = createDispatcher({
    toolProvider: 'toolProvider' in options ? options.toolProvider : options.toolHost,
    resourceProvider: 'resourceProvider' in options ? options.resourceProvider : options.resourceHost,
    serverInfo: options.serverInfo ?? SERVER_INFO,
    notify: emit,
    // Requests to the client go to the same listeners; a transport tells them apart by their id.
    send: emit,
    log,
    clock: options.clock ?? systemClock,
    ...(options.closeSettleMs === undefined ? {} : { closeSettleMs: options.closeSettleMs }),
  });

  let closing: Promise<void> | null = null;
  const shutdown = async (): Promise<void> => {
    await dispatcher.close();
    try {
      await options.onClose?.();
    } catch (error) {
      log(`cleanup failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  };

  return {
    handle: (message) => dispatcher.handle(message),
    onNotification(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    close() {
      closing ??= shutdown();
      return closing;
    },
    state: () => dispatcher.state(),
  };
}
