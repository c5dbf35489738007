// Work ownership: the creation call's work-invocation UUID becomes acquired_by and is never rebound;
// the work resource is a complete host-bound snapshot or an error that keeps the last valid revision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/util/json.ts';
import { createSessionHarness, type SessionHarness } from '../sessions/helpers.ts';
import { at, firstText, num, objs, parseObj, rpcError, rpcResult, type RpcErrorView } from '../helpers/typed-results.ts';

const WORK_URI = 'computer-mcp://runtime/work/v1';
const KEY = 'io.github.computer-mcp/work-invocation';
const HOST_A = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const HOST_B = '1b2c3d4e-5f60-4b7c-9d8e-0f1a2b3c4d5e';
const HANG = '[fake:sigint_result] hold';

type Read = { ok: true; body: JsonObject } | { ok: false; error: RpcErrorView };

async function readWork(h: SessionHarness): Promise<Read> {
  const response = await h.request('resources/read', { uri: WORK_URI });
  if ('error' in response) return { ok: false, error: rpcError(response) };
  return { ok: true, body: parseObj(firstText(rpcResult(response), 'contents'), 'the work snapshot') };
}

async function okWork(h: SessionHarness): Promise<JsonObject> {
  const read = await readWork(h);
  if (!read.ok) throw new Error(`work snapshot failed: ${JSON.stringify(read.error)}`);
  return read.body;
}

const owners = (body: JsonObject): Array<[unknown, unknown, unknown]> =>
  objs(body['owners'], 'owners').map((o) => [o['run_id'], o['acquired_by'], o['state']]);

test("acquired_by is the creation call's UUID; later calls with another UUID never rebind it", async () => {
  const h = await createSessionHarness();
  try {
    assert.equal((await h.request('resources/list'))['result'] !== undefined, true);
    const listed = objs(rpcResult(await h.request('resources/list'))['resources'], 'resources').map((r) => r['uri']);
    assert.ok(listed.includes(WORK_URI));

    const empty = await okWork(h);
    assert.deepEqual([empty['format_version'], empty['uri'], empty['revision'], empty['owners']], [1, WORK_URI, 0, []]);
    assert.match(String(empty['instance_id']), /^[0-9a-f-]{36}$/);

    const runId = await h.start({ prompt: HANG, cwd: h.dir }, { [KEY]: HOST_A });
    const sync = await h.call('claude.run', { prompt: 'sync', cwd: h.dir }, { [KEY]: HOST_A });
    const syncId = String(sync.result?.['run_id']);
    for (const [tool, args] of [
      ['claude.run.result', {}],
      ['claude.run.events', {}],
      ['claude.run.list', null],
      ['claude.run.cancel', {}],
    ] as const) {
      const out = await h.call(tool, args === null ? {} : { run_id: runId, ...args }, { [KEY]: HOST_B });
      assert.equal(out.isError, false, tool);
    }
    await h.settled(runId);
    const body = await okWork(h);
    assert.deepEqual(owners(body), [
      [runId, HOST_A, 'completed'],
      [syncId, HOST_A, 'completed'],
    ]);
    assert.deepEqual(
      objs(body['owners'], 'owners').map((o) => [o['kind'], o['ownership']]),
      [
        ['claude.run', 'active'],
        ['claude.run', 'active'],
      ],
      'retained completed results stay active owners',
    );
    assert.equal(body['instance_id'], empty['instance_id'], 'one instance id per adapter process');

    await h.call('claude.run.release', { run_id: runId }, { [KEY]: HOST_B });
    assert.deepEqual(owners(await okWork(h)), [[syncId, HOST_A, 'completed']], 'release ends ownership');

    const bad = await h.call('claude.run.start', { prompt: 'x', cwd: h.dir }, { [KEY]: 'not-a-uuid' });
    assert.deepEqual([bad.error?.['code'], bad.error?.['path']], ['invalid_arguments', `/_meta/${KEY.replaceAll('/', '~1')}`]);
    assert.equal(owners(await okWork(h)).length, 1, 'an invalid invocation id starts nothing');
  } finally {
    await h.close();
  }
});

test('an unbound run makes the snapshot an error that keeps the last valid revision; revisions only grow', async () => {
  const h = await createSessionHarness();
  try {
    const revisions: number[] = [];
    const bound = await h.start({ prompt: HANG, cwd: h.dir }, { [KEY]: HOST_A });
    const first = await okWork(h);
    revisions.push(num(first['revision'], 'revision'));
    assert.deepEqual(
      owners(first).map((o) => o[1]),
      [HOST_A],
    );

    const unbound = await h.start({ prompt: 'no invocation id', cwd: h.dir });
    for (let i = 0; i < 2; i++) {
      const read = await readWork(h);
      assert.equal(read.ok, false);
      if (read.ok) return;
      assert.equal(at(read.error.data, 'code'), 'work_snapshot_unbound');
      assert.match(read.error.message, new RegExp(`last valid revision stays ${revisions[0]}`));
      assert.match(read.error.message, new RegExp(unbound));
    }
    const unboundDone = await h.settled(unbound);
    assert.equal(unboundDone.isError, false, 'the run itself is unaffected');
    assert.equal((await readWork(h)).ok, false, 'still unbound while retained, even completed');
    await h.call('claude.run.release', { run_id: unbound });

    const after = await okWork(h);
    revisions.push(num(after['revision'], 'revision'));
    assert.ok(revisions[1]! > revisions[0]!, `the revision moved on: ${revisions.join(' -> ')}`);
    assert.deepEqual(
      owners(after).map((o) => o[0]),
      [bound],
    );
    assert.equal((await okWork(h))['revision'], revisions[1], 'reading does not consume a revision');

    await h.call('claude.run.cancel', { run_id: bound });
    await h.settled(bound);
    const settled = await okWork(h);
    revisions.push(num(settled['revision'], 'revision'));
    assert.ok(revisions[2]! > revisions[1]!);
    assert.deepEqual(owners(settled), [[bound, HOST_A, 'completed']]);
  } finally {
    await h.close();
  }
});
