/** The stdio server's deferred providers: the handshake never waits for them, everything else does, in order. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deferProviders, METHODS_WITHOUT_PROVIDERS, needsNoProviders } from '../../lib/cli/deferred-providers.ts';
import type { Providers } from '../../lib/contracts/providers.ts';

interface Recorder {
  readonly events: string[];
  readonly providers: Providers;
}

function recorder(): Recorder {
  const events: string[] = [];
  return {
    events,
    providers: {
      toolProvider: {
        list: () => {
          events.push('list');
          return [];
        },
        call: () => Promise.reject(new Error('unused')),
      },
      resourceProvider: { list: () => [], read: () => '{}' },
      close: async () => {
        events.push('close');
      },
      stop: () => {
        events.push('stop');
      },
    },
  };
}

/** A load the test resolves (or rejects) when it wants. */
function manualLoad(): {
  load: () => Promise<Providers>;
  calls: () => number;
  resolve: (providers: Providers) => void;
  reject: (error: Error) => void;
} {
  let calls = 0;
  let resolve: (providers: Providers) => void = () => {};
  let reject: (error: Error) => void = () => {};
  const promise = new Promise<Providers>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return {
    load: () => {
      calls++;
      return promise;
    },
    calls: () => calls,
    resolve,
    reject,
  };
}

const request = (id: number, method: string): Record<string, unknown> => ({ jsonrpc: '2.0', id, method });
const flush = (): Promise<void> =>
  new Promise((resolve) => {
    setImmediate(resolve);
  });

test('needsNoProviders: only a single initialize, notifications/initialized, ping or server/discover', () => {
  assert.deepEqual(METHODS_WITHOUT_PROVIDERS, ['initialize', 'notifications/initialized', 'ping', 'server/discover']);
  for (const method of METHODS_WITHOUT_PROVIDERS) assert.equal(needsNoProviders({ jsonrpc: '2.0', method }), true, method);
  for (const message of [
    request(1, 'tools/list'),
    request(1, 'tools/call'),
    request(1, 'tasks/get'),
    [request(1, 'server/discover')],
    { jsonrpc: '2.0', id: 1, result: {} },
    { method: 7 },
    null,
    'ping',
  ]) {
    assert.equal(needsNoProviders(message), false, JSON.stringify(message));
  }
});

test('the handshake is handled before any load; tools/list starts the load and waits for it', async () => {
  const loader = manualLoad();
  const deferred = deferProviders(loader.load, () => {});
  const handled: string[] = [];
  // Like the real handlers: only tools/list reads a host.
  const handle = deferred.gate(async (message) => {
    const method = String((message as { method: string }).method);
    handled.push(method);
    return method === 'tools/list' ? deferred.providers.toolProvider.list() : {};
  });

  await handle(request(1, 'initialize'));
  await handle({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await handle(request(2, 'ping'));
  assert.equal(loader.calls(), 0, 'the handshake loads nothing');
  assert.deepEqual(handled, ['initialize', 'notifications/initialized', 'ping']);
  // The forwarders refuse use before composition (the gate is what keeps handlers away from them).
  assert.throws(() => deferred.providers.resourceProvider.list(), /used before they were composed/);

  const list = handle(request(3, 'tools/list'));
  await flush();
  assert.equal(loader.calls(), 1);
  assert.deepEqual(handled, ['initialize', 'notifications/initialized', 'ping'], 'tools/list waits for the providers');
  const rec = recorder();
  loader.resolve(rec.providers);
  await list;
  assert.deepEqual(handled.at(-1), 'tools/list');
  assert.deepEqual(rec.events, ['list'], 'the forwarders reach the composed providers');
  deferred.start();
  assert.equal(loader.calls(), 1, 'start is idempotent');
});

test('once a message waits, a later ping waits behind it: messages keep their order', async () => {
  const loader = manualLoad();
  const deferred = deferProviders(loader.load, () => {});
  const handled: number[] = [];
  const handle = deferred.gate(async (message) => {
    handled.push((message as { id: number }).id);
  });
  const waiting = [handle(request(1, 'tools/list')), handle(request(2, 'ping')), handle(request(3, 'initialize'))];
  await flush();
  assert.deepEqual(handled, []);
  loader.resolve(recorder().providers);
  await Promise.all(waiting);
  assert.deepEqual(handled, [1, 2, 3]);
  await handle(request(4, 'tools/list'));
  assert.deepEqual(handled, [1, 2, 3, 4], 'composed: handled directly');
});

test('close before anything needed the providers loads nothing; a close during the load waits and ends them', async () => {
  const idle = manualLoad();
  const unused = deferProviders(idle.load, () => {});
  await unused.providers.close();
  unused.providers.stop();
  unused.start();
  assert.equal(idle.calls(), 0, 'ended before the load: it never starts');

  const loader = manualLoad();
  const deferred = deferProviders(loader.load, () => {});
  deferred.start();
  let closed = false;
  const closing = deferred.providers.close().then(() => {
    closed = true;
  });
  await flush();
  assert.equal(closed, false, 'close waits for the load in flight');
  const rec = recorder();
  loader.resolve(rec.providers);
  await closing;
  assert.deepEqual(rec.events, ['stop', 'close'], 'providers that arrive after the end are stopped and closed');
});

test('a failed load is logged once and each waiting request fails on its own', async () => {
  const loader = manualLoad();
  const logs: string[] = [];
  const deferred = deferProviders(loader.load, (line) => logs.push(line));
  const handle = deferred.gate(async () => deferred.providers.toolProvider.list());
  const first = handle(request(1, 'tools/list'));
  const second = handle(request(2, 'resources/list'));
  loader.reject(new Error('boom'));
  await assert.rejects(first, /the tool providers failed to load: boom/);
  await assert.rejects(second, /the tool providers failed to load: boom/);
  await assert.rejects(handle(request(3, 'tools/list')), /the tool providers failed to load: boom/);
  assert.deepEqual(logs, ['the tool providers failed to load: boom']);
  assert.throws(() => deferred.providers.toolProvider.tasks, /failed to load: boom/);
});

test('withTasks: the task provider is there before the load (server/discover reads only that) and forwards after it', async () => {
  const loader = manualLoad();
  const deferred = deferProviders(loader.load, () => {}, { withTasks: true });
  const tasks = deferred.providers.toolProvider.tasks;
  assert.ok(tasks, 'present before the load');
  assert.equal(loader.calls(), 0, 'asking loads nothing');
  assert.throws(() => tasks.get('run_x'), /used before they were composed/);
  const without = deferProviders(manualLoad().load, () => {});
  assert.throws(
    () => without.providers.toolProvider.tasks,
    /used before they were composed/,
    'without the declaration the question waits for the providers',
  );
  deferred.start();
  const rec = recorder();
  loader.resolve(rec.providers);
  await flush();
  assert.throws(() => tasks.get('run_x'), /declared to serve tasks and do not/, 'a loader that broke its declaration fails loudly');
});
