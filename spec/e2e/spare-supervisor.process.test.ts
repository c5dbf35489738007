// The stdio server keeps one idle supervisor warm: it boots after the handshake's first tools/list (never
// in the way of `initialize`), the next run takes it, a new one boots after that run, and stdin EOF or a
// signal ends it with the server: no process is left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INITIALIZE, startRawServer, type RawServer } from '../faults/raw-server.ts';
import { isRunning, killAll, supervisorsOf, waitFor, waitForNoOrphans } from '../faults/proc-helpers.ts';
import { waitForReady } from '../helpers/proc.ts';
import type { ProcessIdentity } from '../../lib/supervisor/protocol.ts';
import { objAt, rpcResult, toolResultOf } from '../helpers/typed-results.ts';
import { readFakeRecord, recordFiles, type FakeRecord } from '../helpers/tool-harness.ts';
import { assertRunServed } from '../helpers/darwin-mode.ts';

/** The handshake, then the first tools/list: what makes the server prepare its spare. */
async function handshakeAndList(server: RawServer): Promise<void> {
  server.send(INITIALIZE('init'));
  await server.response('init');
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  server.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
  await server.response('list');
}

for (const end of ['stdin EOF', 'SIGTERM'] as const) {
  test(`the spare supervisor is used by the next run, replaced after it, and gone after ${end}`, async () => {
    const server = startRawServer();
    const seen: ProcessIdentity[] = [];
    try {
      server.send(INITIALIZE('init'));
      await server.response('init');
      assert.deepEqual(supervisorsOf(server.pid), [], 'nothing is spawned before the tools are listed');
      server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      server.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
      await server.response('list');
      const [spare] = await waitFor('one idle spare', () => {
        const s = supervisorsOf(server.pid);
        return s.length === 1 ? s : undefined;
      });
      assert.ok(spare !== undefined);
      seen.push(spare);

      server.send({ jsonrpc: '2.0', id: 'run', method: 'tools/call', params: { name: 'claude.run', arguments: { prompt: 'hi' } } });
      const response = await server.response('run');
      const result = rpcResult(response);
      assertRunServed(result['isError'], toolResultOf(result), JSON.stringify(response).slice(0, 800));
      // The run took the spare: it is gone with its run, and one new spare replaced it.
      const [next] = await waitFor('the next spare', () => {
        const s = supervisorsOf(server.pid);
        return s.length === 1 && s[0]?.pid !== spare.pid && !isRunning(spare) ? s : undefined;
      });
      assert.ok(next !== undefined);
      seen.push(next);

      if (end === 'stdin EOF') server.child.stdin.end();
      else server.child.kill('SIGTERM');
      const code = await new Promise<number | null>((resolve) => server.child.once('exit', (c) => resolve(c)));
      assert.equal(code, 0);
      await waitForNoOrphans(
        seen,
        seen.map((s) => s.pid),
        10_000,
      );
      if (end === 'stdin EOF') assert.equal(isRunning(next), false, 'close awaited the spare');
    } finally {
      server.kill();
    }
  });
}

test('the spare checks the version before the run is asked for; the run, with a script binary (the fake), checks again', async () => {
  const records = mkdtempSync(join(tmpdir(), 'crm-spare-records-'));
  const server = startRawServer({ env: { FAKE_CLAUDE_RECORD_DIR: records } });
  const read = (): FakeRecord[] => recordFiles(records).map(readFakeRecord);
  const isVersion = (r: FakeRecord): boolean => r.argv.includes('--version');
  const marker = (r: FakeRecord): string | undefined => r.env['CLAUDE_RUN_MCP_RUN_MARKER'];
  try {
    await handshakeAndList(server);
    const [early] = await waitFor("the spare's version check, before any run", () => {
      const r = read();
      return r.length === 1 ? r : undefined;
    });
    assert.ok(early !== undefined && isVersion(early));
    server.send({ jsonrpc: '2.0', id: 'run', method: 'tools/call', params: { name: 'claude.run', arguments: { prompt: 'hi' } } });
    const response = await server.response('run');
    assertRunServed(objAt(response, 'result')['isError'], toolResultOf(objAt(response, 'result')), JSON.stringify(response).slice(0, 800));
    // The run took the spare (same marker). A script may exec another binary that its own identity does not
    // cover, so its early answer is not reused: the run checked again, in the same supervisor.
    const run = read().filter((r) => !isVersion(r));
    assert.equal(run.length, 1);
    const [native] = run;
    assert.ok(native !== undefined && marker(native) !== undefined);
    assert.equal(marker(early), marker(native), 'the run took the spare that checked ahead');
    assert.equal(read().filter((r) => isVersion(r) && marker(r) === marker(native)).length, 2);
    server.child.stdin.end();
    assert.equal(await new Promise<number | null>((resolve) => server.child.once('exit', (c) => resolve(c))), 0);
  } finally {
    server.kill();
    rmSync(records, { recursive: true, force: true });
  }
});

test('SIGTERM while the spare checks the version ahead: the server exits and that check is ended too', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-spare-hang-'));
  const readyFile = join(dir, 'ready.jsonl');
  const server = startRawServer({ env: { FAKE_CLAUDE_VERSION_MODE: 'hang', FAKE_CLAUDE_READY_FILE: readyFile } });
  const seen: ProcessIdentity[] = [];
  try {
    await handshakeAndList(server);
    const [spare] = await waitFor('one idle spare', () => {
      const s = supervisorsOf(server.pid);
      return s.length === 1 ? s : undefined;
    });
    assert.ok(spare !== undefined);
    const check = await waitForReady(readyFile, 'version');
    seen.push(spare, check);
    server.child.kill('SIGTERM');
    assert.equal(await new Promise<number | null>((resolve) => server.child.once('exit', (c) => resolve(c))), 0);
    await waitForNoOrphans(seen, [spare.pid], 10_000);
  } finally {
    server.kill();
    killAll(seen);
    rmSync(dir, { recursive: true, force: true });
  }
});
