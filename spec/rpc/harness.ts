// Builds an adapter over the fake providers and offers terse request helpers.
import { createAdapter, type Adapter, type AdapterOptions } from '../../lib/adapter.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import { createFakeResourceProvider, createFakeToolProvider, type FakeToolProvider } from '../../fixtures/providers/fake-providers.ts';

export interface Harness {
  readonly adapter: Adapter;
  readonly tools: FakeToolProvider;
  readonly notifications: JsonObject[];
  readonly logs: string[];
  request(id: number | string, method: string, params?: unknown): Promise<unknown>;
}

export function createHarness(overrides: Partial<AdapterOptions> = {}): Harness {
  const tools = createFakeToolProvider();
  const logs: string[] = [];
  const notifications: JsonObject[] = [];
  const adapter = createAdapter({
    toolProvider: tools,
    resourceProvider: createFakeResourceProvider(),
    log: (line) => logs.push(line),
    ...overrides,
  });
  adapter.onNotification((n) => notifications.push(n));
  return {
    adapter,
    tools,
    notifications,
    logs,
    request: (id, method, params) =>
      adapter.handle(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params }),
  };
}

export async function initializedHarness(protocolVersion: string, overrides: Partial<AdapterOptions> = {}): Promise<Harness> {
  const harness = createHarness(overrides);
  await harness.request('init', 'initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'spec', version: '0' } });
  await harness.adapter.handle({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return harness;
}

/** The checked error / result of a response (a response of the other kind fails the test, naming it). */
export { rpcError as errorOf, rpcResult as resultOf } from '../helpers/typed-results.ts';
