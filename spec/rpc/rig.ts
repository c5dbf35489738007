// A connection over in-memory streams and the fake providers, with terse helpers.
import { PassThrough } from 'node:stream';
import { createAdapter } from '../../lib/adapter.ts';
import { serveConnection, type Connection, type ConnectionOptions } from '../../lib/rpc/connection.ts';
import { systemClock } from '../../lib/util/clock.ts';
import { createFakeResourceProvider, createFakeToolProvider, type FakeToolProvider } from '../../fixtures/providers/fake-providers.ts';
import { createGatedSink, waitFor, type GatedSink } from './streams.ts';
import type { JsonObject } from '../../lib/util/json.ts';

export interface Rig {
  readonly input: PassThrough;
  readonly sink: GatedSink;
  readonly connection: Connection;
  readonly tools: FakeToolProvider;
  readonly logs: string[];
  readonly cleanups: () => number;
  /** How many parsed messages reached the adapter. */
  readonly handled: () => number;
  send(message: unknown): void;
  byId(id: unknown): Promise<Record<string, unknown>>;
}

export type RigOptions = Partial<Omit<ConnectionOptions, 'input' | 'output' | 'adapter' | 'log'>> & {
  readonly gated?: boolean;
  readonly sinkHighWaterMark?: number;
};

export const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25' } };

export function createRig(options: RigOptions = {}): Rig {
  const { gated, sinkHighWaterMark, ...rest } = options;
  const input = new PassThrough();
  const sink = createGatedSink(gated ?? false, sinkHighWaterMark ?? 1);
  const tools = createFakeToolProvider();
  const logs: string[] = [];
  let cleanups = 0;
  let handled = 0;
  const inner = createAdapter({
    toolProvider: tools,
    resourceProvider: createFakeResourceProvider(),
    onClose: async () => {
      cleanups++;
    },
  });
  const adapter = {
    handle(message: unknown) {
      handled++;
      return inner.handle(message);
    },
    onNotification: inner.onNotification,
    close: inner.close,
  };
  const connection = serveConnection({ input, output: sink.stream, adapter, log: (line) => logs.push(line), clock: systemClock, ...rest });
  return {
    input,
    sink,
    connection,
    tools,
    logs,
    cleanups: () => cleanups,
    handled: () => handled,
    send: (message) => input.write(`${JSON.stringify(message)}\n`),
    async byId(id) {
      const find = (): JsonObject | undefined => sink.messages().find((m) => m['id'] === id && ('result' in m || 'error' in m));
      await waitFor(() => find() !== undefined);
      return find() ?? {};
    },
  };
}
