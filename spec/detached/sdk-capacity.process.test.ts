// Through the official SDK client over stdio: the retention bounds exactly at and one past them
// (4 active, 32 retained), eviction of the oldest settled run, every run_not_found wording, and the
// work snapshot (acquired_by, revision, unbound errors that keep the last valid revision).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSdkServer, type SdkServer } from './sdk-server.ts';
import { waitUntil } from '../sessions/helpers.ts';
import { readFakeRecord, recordFiles } from '../helpers/tool-harness.ts';
import { at, firstText, num, objs, parseObj, str } from '../helpers/typed-results.ts';
import type { JsonValue } from '../../lib/util/json.ts';

const WORK_URI = 'computer-mcp://runtime/work/v1';
const HANG = '[fake:sigint_result] hold until cancelled';

/** The work snapshot, checked down to what this spec reads. */
type Member = JsonValue | undefined;
async function work(
  server: SdkServer,
): Promise<{ revision: number; instance_id: string; owners: Array<{ run_id: Member; acquired_by: Member; state: Member }> }> {
  const snapshot = parseObj(firstText(await server.client.readResource({ uri: WORK_URI }), 'contents'), 'the work snapshot');
  return {
    revision: num(snapshot['revision'], 'revision'),
    instance_id: str(snapshot['instance_id'], 'instance_id'),
    owners: objs(snapshot['owners'], 'owners').map((o) => ({ run_id: o['run_id'], acquired_by: o['acquired_by'], state: o['state'] })),
  };
}

/**
 * Processes the fake ran, by run marker (the fake records argv and environment of each): runs, the version
 * checks of those runs, and version checks of no run (the server's idle spare checks ahead of the next run).
 */
function spawned(records: string): { runs: number; checksPerRun: number[]; otherChecks: number } {
  const all = recordFiles(records).map(readFakeRecord);
  const marker = (r: { env: Record<string, string> }): string => r.env['CLAUDE_RUN_MCP_RUN_MARKER'] ?? '';
  const checks = all.filter((r) => r.argv.includes('--version'));
  const runMarkers = all.filter((r) => !r.argv.includes('--version')).map(marker);
  return {
    runs: runMarkers.length,
    checksPerRun: runMarkers.map((m) => checks.filter((c) => marker(c) === m).length),
    otherChecks: checks.filter((c) => !runMarkers.includes(marker(c))).length,
  };
}

test('SDK: 4 active runs at most, 32 retained, the 33rd start evicts the oldest settled run', async () => {
  // The one slow run below holds before its end until this file exists, so it settles after the run
  // created after it, whatever the machine's speed.
  const gateDir = mkdtempSync(join(tmpdir(), 'crm-gate-'));
  const gate = join(gateDir, 'open');
  const records = mkdtempSync(join(tmpdir(), 'crm-records-'));
  const server = await startSdkServer({
    env: { FAKE_CLAUDE_SLOW_EVENTS: '6', FAKE_CLAUDE_DELAY_MS: '150', FAKE_CLAUDE_GATE_FILE: gate, FAKE_CLAUDE_RECORD_DIR: records },
  });
  const host = randomUUID();
  try {
    const empty = await work(server);
    assert.deepEqual([empty.revision, empty.owners], [0, []]);

    const active: string[] = [];
    for (let i = 0; i < 4; i++) active.push(await server.start({ prompt: HANG }, host));
    const fifth = await server.call('claude.run.start', { prompt: HANG, cwd: server.dir }, host);
    assert.equal(fifth.error?.['code'], 'active_limit_reached');
    assert.match(String(fifth.error?.['message']), /nothing was started/);
    const sync = await server.call('claude.run', { prompt: 'sync', cwd: server.dir }, host);
    assert.equal(sync.error?.['code'], 'active_limit_reached', 'a synchronous run counts toward the active limit');
    const listed = await server.call('claude.run.list', {});
    assert.deepEqual([listed.result?.['retained'], listed.result?.['active']], [4, 4]);
    const snapshot = await work(server);
    assert.deepEqual(
      snapshot.owners.map((o) => [o.run_id, o.acquired_by]),
      active.map((id) => [id, host]),
    );

    assert.equal((await server.call('claude.run.release', { run_id: active[0]! })).error?.['code'], 'run_active');
    await waitUntil('4 native processes ready', () => server.lines().filter((l) => l.ready === 'handlers').length === 4);
    // The refused starts spawned nothing: four runs, each with its own check (and the check made ahead by
    // the spare it took, when it took one: the fake is a script, whose early answer is not reused), and at
    // most the one check of the server's idle spare.
    const counted = spawned(records);
    assert.equal(counted.runs, 4, 'the refused starts spawned nothing');
    assert.ok(
      counted.checksPerRun.every((n) => n === 1 || n === 2),
      `version checks per run: ${counted.checksPerRun.join(', ')}`,
    );
    assert.ok(counted.otherChecks <= 1, `${counted.otherChecks} version checks of no run`);
    for (const id of active) assert.equal((await server.call('claude.run.cancel', { run_id: id })).result?.['cancel_requested'], true);
    for (const id of active) assert.equal((await server.settled(id)).error?.['code'], 'cancelled');
    for (const id of active)
      assert.equal((await server.call('claude.run.release', { run_id: id }, randomUUID())).result?.['released'], true);
    const released = active[0]!;

    // Created first but settled second: eviction goes by settling order.
    const older = await server.start({ prompt: '[fake:slow] created first' }, host);
    const younger = await server.start({ prompt: 'created second' }, host);
    assert.equal((await server.settled(younger)).isError, false);
    writeFileSync(gate, '');
    assert.equal((await server.settled(older)).isError, false);
    const kept = [older, younger];
    while (kept.length < 32) {
      const batch: string[] = [];
      for (let i = 0; i < Math.min(4, 32 - kept.length); i++) batch.push(await server.start({ prompt: `fill ${kept.length + i}` }, host));
      for (const id of batch) assert.equal((await server.settled(id)).isError, false);
      kept.push(...batch);
    }
    const full = await server.call('claude.run.list', {});
    assert.deepEqual(
      objs(at(full.result, 'runs'), 'runs').map((r) => r['run_id']),
      kept,
      'exactly 32 retained, none evicted',
    );
    const revisionAtBound = (await work(server)).revision;

    const thirtyThird = await server.start({ prompt: 'one past the bound' }, host);
    const after = await server.call('claude.run.list', {});
    assert.equal(after.result?.['retained'], 32);
    assert.deepEqual(
      objs(at(after.result, 'runs'), 'runs').map((r) => r['run_id']),
      [...kept.filter((id) => id !== younger), thirtyThird],
    );
    const evicted = await server.call('claude.run.result', { run_id: younger });
    assert.equal(evicted.error?.['code'], 'run_not_found');
    assert.match(String(evicted.error?.['message']), /was evicted/);
    await server.settled(thirtyThird);
    await server.start({ prompt: 'two past the bound' }, host);
    assert.match(
      String((await server.call('claude.run.events', { run_id: older })).error?.['message']),
      /was evicted/,
      'then the next oldest settled',
    );

    assert.match(String((await server.call('claude.run.release', { run_id: released })).error?.['message']), /was released/);
    assert.match(
      String((await server.call('claude.run.cancel', { run_id: 'run_' + 'Z'.repeat(22) })).error?.['message']),
      /unknown to this adapter process/,
    );
    const final = await work(server);
    assert.ok(final.revision > revisionAtBound);
    assert.equal(final.owners.length, 32);
    assert.ok(!final.owners.some((o) => o.run_id === younger || o.run_id === older), 'eviction ends ownership');
  } finally {
    await server.close();
    for (const dir of [gateDir, records]) rmSync(dir, { recursive: true, force: true });
  }
});

test('SDK: work snapshot errors while an unbound run is retained and keep the last valid revision', async () => {
  const server = await startSdkServer();
  const host = randomUUID();
  try {
    const bound = await server.start({ prompt: 'bound' }, host);
    await server.settled(bound);
    const valid = await work(server);
    assert.deepEqual(
      valid.owners.map((o) => [o.run_id, o.acquired_by, o.state]),
      [[bound, host, 'completed']],
    );

    const unbound = await server.start({ prompt: 'no invocation metadata' });
    for (let i = 0; i < 2; i++) {
      await assert.rejects(server.client.readResource({ uri: WORK_URI }), (error: { data?: { code?: string }; message?: string }) => {
        assert.equal(error.data?.code, 'work_snapshot_unbound');
        assert.match(String(error.message), new RegExp(`last valid revision stays ${valid.revision}`));
        return true;
      });
    }
    assert.equal((await server.settled(unbound)).isError, false, 'clients without the metadata can use every tool');
    assert.equal((await server.call('claude.run.events', { run_id: unbound, limit: 1 })).isError, false);
    assert.equal((await server.call('claude.run.release', { run_id: unbound })).result?.['released'], true);

    const next = await work(server);
    assert.equal(next.instance_id, valid.instance_id);
    assert.ok(next.revision > valid.revision, `${valid.revision} -> ${next.revision}`);
    assert.deepEqual(
      next.owners.map((o) => o.run_id),
      [bound],
    );
    assert.equal((await work(server)).revision, next.revision, 'reading is not a change');
  } finally {
    await server.close();
  }
});
