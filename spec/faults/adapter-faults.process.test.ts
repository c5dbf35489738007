/**
 * Faults of the adapter process itself, on the real server: kill -9 at seeded random points of a run (every
 * process of the run must go, including a child in its own session), and a client that stops reading
 * stdout during a flood with progress (memory stays bounded: progress is dropped, the response is kept).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { ProcessIdentity } from '../../lib/supervisor/protocol.ts';
import { identityOf } from '../../lib/process/proc-stat.ts';
import { createRandom } from './schema-cases.ts';
import { descendantsOf, isRunning, killAll, supervisorsOf, waitFor, waitForNoOrphans } from './proc-helpers.ts';
import { toolResultOf, rpcResult } from '../helpers/typed-results.ts';
import { INITIALIZE, isBatch, startRawServer, type RawServer } from './raw-server.ts';
import { assertRunServed } from '../helpers/darwin-mode.ts';

const SEED = 0xada_0009;
const FLOOD_NATIVE = fileURLToPath(new URL('./flood-native.mjs', import.meta.url));
const MIB = 1024 * 1024;

async function initialize(server: RawServer): Promise<void> {
  server.send(INITIALIZE('init'));
  await server.response('init');
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

test('kill -9 of the adapter at random points of a run: every process of the run goes', async (t) => {
  const random = createRandom(SEED);
  for (let i = 0; i < 3; i++) {
    const server = startRawServer({ env: { FAKE_CLAUDE_SCENARIO: 'setsid_child', FAKE_CLAUDE_HOLD_MS: 'hang' } });
    const seen = new Map<string, ProcessIdentity>();
    const supervisors = new Set<number>();
    try {
      await initialize(server);
      server.send({ jsonrpc: '2.0', id: 'start', method: 'tools/call', params: { name: 'claude.run.start', arguments: { prompt: 'x' } } });
      await server.response('start');
      const pointMs = Math.floor(random() * 2000);
      const killAt = performance.now() + pointMs;
      // Watch the run's processes until the kill point, so even short-lived ones are known.
      while (performance.now() < killAt) {
        for (const stat of descendantsOf(server.pid)) seen.set(`${stat.pid}:${stat.start}`, identityOf(stat));
        for (const id of supervisorsOf(server.pid)) supervisors.add(id.pid);
        await delay(10);
      }
      server.kill();
      await server.waitUntil('adapter gone', () => server.child.exitCode !== null || server.child.signalCode !== null);
      // Not a wall-clock promise about cleanup speed: a supervisor killed mid-boot must first finish loading
      // under tsx (seconds on a busy machine) before it reads its EOF; the bound only stops a real leak from
      // hanging the suite. What is asserted is that everything goes, and the time is reported.
      const killedAt = performance.now();
      await waitForNoOrphans([...seen.values()], [...supervisors], 60_000);
      t.diagnostic(
        `point ${pointMs} ms: ${seen.size} process(es) of the run observed, all gone ${Math.round(performance.now() - killedAt)} ms after the kill`,
      );
    } finally {
      killAll([...seen.values()]);
      server.kill();
    }
  }
});

test('a client that stops reading stdout: bounded memory, progress dropped, the response kept', async (t) => {
  const events = 100_000;
  const server = startRawServer({ claudeBin: FLOOD_NATIVE, env: { FLOOD_EVENTS: String(events) } });
  try {
    await initialize(server);
    server.resetPeak();
    const before = server.memory();
    server.child.stdout.pause();
    server.send({
      jsonrpc: '2.0',
      id: 'flood',
      method: 'tools/call',
      params: { name: 'claude.run', arguments: { prompt: 'x' }, _meta: { progressToken: 'p' } },
    });
    // The run is over once nothing of it is left below the server (its response is queued behind the stall).
    // Its supervisor exits only after the cleanup (the spare that boots after it runs nothing).
    const [runSupervisor] = await waitFor(
      'the run started',
      () => {
        const s = supervisorsOf(server.pid);
        return s.length > 0 ? s : undefined;
      },
      30_000,
    );
    assert.ok(runSupervisor !== undefined);
    await waitFor('the run over', () => !isRunning(runSupervisor), 60_000);
    const grown = server.memory().hwm - before.rss;
    server.child.stdout.resume();
    const response = await server.response('flood');
    const delivered = server.messages.filter((m) => !isBatch(m) && m['method'] === 'notifications/progress');
    const progress = delivered.length;
    const lineBytes = delivered.reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)) + 1, 0) / Math.max(1, progress);
    const result = toolResultOf(rpcResult(response));
    assertRunServed(result['is_error'], result, JSON.stringify(result['error']));
    server.send({
      jsonrpc: '2.0',
      id: 'full',
      method: 'tools/call',
      params: { name: 'claude.run.result', arguments: { run_id: result['run_id'], detail: 'full' } },
    });
    const full = toolResultOf(rpcResult(await server.response('full')));
    const total = Number(full['events_total']);
    assert.equal(server.messages.filter((m) => !isBatch(m) && m['id'] === 'flood').length, 1, 'the response arrives exactly once');
    assert.ok(total > events, `the whole flood was ingested (${total} events)`);
    assert.ok(progress > 0 && progress < total / 2, `progress was dropped while the client did not read (${progress} of ${total})`);
    // An unbounded queue would have held every dropped line (about 1 KiB each); the whole peak, garbage of
    // ingesting a 100 MB flood included, stays below that alone.
    const droppedBytes = (total - progress) * lineBytes;
    assert.ok(
      grown < droppedBytes,
      `peak RSS grew ${(grown / MIB).toFixed(1)} MiB; the dropped progress was ${(droppedBytes / MIB).toFixed(1)} MiB`,
    );
    t.diagnostic(
      `${total} events, ${progress} progress notifications delivered, ${(droppedBytes / MIB).toFixed(1)} MiB dropped, peak RSS +${(grown / MIB).toFixed(1)} MiB while stalled`,
    );
    assert.equal((await server.close()).code, 0);
  } finally {
    server.kill();
  }
});
