/**
 * Framing fuzz against the real server process: random bytes, truncated UTF-8, a 64 MiB line, deeply nested
 * JSON, 10k pipelined requests and every kind of id. The server never crashes, never answers a
 * notification, answers each well-formed request exactly once, and writes only JSON lines.
 * A closing `ping` is the readiness signal: replies to earlier lines are written before its reply.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRandom } from './schema-cases.ts';
import { INITIALIZE, isBatch, startRawServer, type Line, type Message, type RawServer } from './raw-server.ts';
import { at, obj, rpcError, rpcResult } from '../helpers/typed-results.ts';

const SEED = 0xf0_0d;
const MIB = 1024 * 1024;
const BLANK_RE = /^[ \t\r]*$/;

async function handshake(server: RawServer, protocolVersion?: string): Promise<void> {
  server.send(INITIALIZE('init', protocolVersion));
  const reply = await server.response('init');
  assert.ok('result' in reply, JSON.stringify(reply));
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

/** Sends a ping with a fresh id and returns every message received before its reply. */
async function fence(server: RawServer, id: string): Promise<Line[]> {
  server.send({ jsonrpc: '2.0', id, method: 'ping' });
  await server.response(id);
  const at = server.messages.findIndex((m) => !isBatch(m) && m['id'] === id);
  return server.messages.slice(0, at);
}

/** The lines that are single messages (a test that sends no batch gets no batch reply: checked here). */
function singles(lines: readonly Line[]): Message[] {
  return lines.map((line) => {
    assert.ok(!isBatch(line), `an unexpected batch reply: ${JSON.stringify(line).slice(0, 300)}`);
    return line;
  });
}

async function finish(server: RawServer): Promise<void> {
  assert.deepEqual(server.garbage, [], 'every stdout line is JSON');
  assert.doesNotMatch(server.stderr(), /internal error|handler chain failed|fatal/i);
  const status = await server.close();
  assert.deepEqual(status, { code: 0, signal: null }, 'clean exit on stdin EOF');
}

const nullIdErrors = (messages: readonly Message[]): Message[] => messages.filter((m) => m['id'] === null && 'error' in m);

test('random bytes and truncated UTF-8: one error per non-blank line, then serving as before', async (t) => {
  const server = startRawServer();
  try {
    await handshake(server);
    const random = createRandom(SEED);
    const lines: Buffer[] = [];
    // Half raw bytes (almost never UTF-8), half JSON-ish ASCII (mostly parse errors, some valid non-requests).
    const JSONISH = '{}[]":,0123456789.-+eEtrufalsn \\\tabc"jsonrpcidmethod';
    for (let i = 0; i < 300; i++) {
      const bytes = Buffer.alloc(1 + Math.floor(random() * 3000));
      for (let j = 0; j < bytes.length; j++) {
        const b = i % 2 === 0 ? Math.floor(random() * 256) : JSONISH.charCodeAt(Math.floor(random() * JSONISH.length));
        bytes[j] = b === 0x0a ? 0x20 : b;
      }
      lines.push(bytes);
    }
    // Valid JSON text with a multibyte character cut short, at the end and in the middle.
    lines.push(
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":"cut1","method":"ping","params":{"x":"'),
        Buffer.from([0xe2, 0x82]),
        Buffer.from('"}}'),
      ]),
    );
    lines.push(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"cut2","method":"ping"'), Buffer.from([0xf0, 0x9f, 0x98])]));
    lines.push(Buffer.from([0xc3]));
    const nonBlank = lines.filter((l) => !BLANK_RE.test(l.toString('latin1'))).length;
    // Written in odd-sized pieces so frames straddle chunk boundaries.
    const all = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
    for (let at = 0; at < all.length;) {
      const size = 1 + Math.floor(random() * 5000);
      server.write(all.subarray(at, at + size));
      at += size;
    }
    const replies = singles((await fence(server, 'after-random')).slice(1)); // the initialize reply comes first
    assert.equal(replies.length, nonBlank, 'exactly one reply per non-blank line');
    assert.equal(nullIdErrors(replies).length, nonBlank, 'every reply is an error without an id (nothing was readable)');
    for (const reply of replies) assert.ok([-32700, -32600].includes(rpcError(reply).code), JSON.stringify(reply));
    const utf8 = replies.filter((r) => /UTF-8/.test(rpcError(r).message)).length;
    const parse = replies.filter((r) => rpcError(r).code === -32700).length - utf8;
    assert.ok(utf8 > 0 && parse > 0, 'both decoding and parsing were exercised');
    t.diagnostic(
      `${nonBlank} garbage lines: ${utf8} invalid UTF-8, ${parse} parse errors, ${nonBlank - utf8 - parse} invalid requests (seed ${SEED})`,
    );
    await finish(server);
  } finally {
    server.kill();
  }
});

test('a 128 MiB line: refused once as frame_too_large without being buffered whole', async (t) => {
  const server = startRawServer();
  try {
    await handshake(server);
    server.resetPeak();
    const before = server.memory();
    // Large enough that what the server holds (about 50–67 MiB on a busy machine) stays clearly below it.
    const big = Buffer.alloc(128 * MIB, 0x61);
    big.write('{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"');
    big.write('"}}', big.length - 3);
    server.write(big);
    server.write('\n');
    const replies = singles((await fence(server, 'after-big')).slice(1));
    assert.equal(replies.length, 1, JSON.stringify(replies).slice(0, 500));
    const error = rpcError(replies[0]);
    assert.equal(replies[0]?.['id'], null);
    assert.equal(at(error.data, 'code'), 'frame_too_large');
    // Never the whole line. What the peak holds is the 16 MiB frame buffer (and its predecessor while it
    // doubled) plus 64 KiB read chunks awaiting garbage collection: about 50 MiB for lines of 64 to 256 MiB.
    const grown = server.memory().hwm - before.rss;
    assert.ok(grown < big.length, `peak RSS grew ${(grown / MIB).toFixed(1)} MiB`);
    t.diagnostic(`peak RSS grew ${(grown / MIB).toFixed(1)} MiB for a ${big.length / MIB} MiB line`);
    await finish(server);
  } finally {
    server.kill();
  }
});

test('deeply nested JSON (100k levels) in every position: answered, never a crash', async () => {
  const server = startRawServer();
  try {
    await handshake(server, '2025-03-26');
    const depth = 100_000;
    const deepArray = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const deepObject = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const frames = [
      deepArray, // a batch (2025-03-26) whose one element is not a request
      deepObject, // an object that is not a request
      `{"jsonrpc":"2.0","id":${deepArray},"method":"ping"}`,
      `{"jsonrpc":"2.0","id":"d-meta","method":"ping","params":{"_meta":${deepObject}}}`,
      `{"jsonrpc":"2.0","id":"d-args","method":"tools/call","params":{"name":"claude.run","arguments":{"prompt":"x","model":${deepObject}}}}`,
      `{"jsonrpc":"2.0","id":"d-tools","method":"tools/call","params":{"name":"claude.run","arguments":{"prompt":"x","allowed_tools":${deepArray}}}}`,
      `{"jsonrpc":"2.0","id":"d-unknown","method":"tools/call","params":{"name":"claude.run.list","arguments":{"x":${deepObject}}}}`,
      `{"jsonrpc":"2.0","id":"d-progress","method":"tools/call","params":{"name":"claude.run.list","arguments":{},"_meta":{"progressToken":${deepObject}}}}`,
      `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${deepObject}}}`,
      `[${deepObject},{"jsonrpc":"2.0","id":"d-batch","method":"ping"}]`,
    ];
    server.write(`${frames.join('\n')}\n`);
    // A batch reply takes more turns than a lone ping: wait for it before fencing.
    await server.waitUntil('the batch reply', () => server.messages.some((m) => isBatch(m) && m.some((r) => r['id'] === 'd-batch')));
    const replies = (await fence(server, 'after-deep')).slice(1);
    const byId = (id: string): Message | undefined => replies.flatMap((m) => (isBatch(m) ? m : [m])).find((m) => m['id'] === id);
    assert.equal(replies.length, 9, JSON.stringify(replies).slice(0, 2000));
    assert.deepEqual(byId('d-meta')?.['result'], {});
    for (const id of ['d-args', 'd-tools', 'd-unknown']) assert.equal(rpcError(byId(id)).code, -32602, id);
    assert.equal(at(rpcError(byId('d-args')).data, 'path'), '/model');
    assert.equal(at(rpcError(byId('d-tools')).data, 'path'), '/allowed_tools/0');
    assert.ok(byId('d-progress') && 'result' in obj(byId('d-progress')), 'a deep progressToken is ignored, the call runs');
    assert.deepEqual(rpcResult(byId('d-batch')), {});
    await finish(server);
  } finally {
    server.kill();
  }
});

test('10k pipelined requests with every kind of id: each answered exactly once, notifications never', async () => {
  const server = startRawServer();
  try {
    await handshake(server);
    const lines: string[] = [];
    const expectedIds: (string | number)[] = [];
    let invalid = 0;
    const ids: (string | number)[] = [0, -1, 1.5, -(2 ** 53 - 1), 2 ** 53 - 1, '', 'str', 'ünïcödé ✓', '0', ' '];
    for (let i = 0; i < 10_000; i++) {
      const kind = i % 10;
      if (kind < 6) {
        const id = ids[i] ?? (i % 2 === 0 ? i : `s${i}`);
        lines.push(JSON.stringify({ jsonrpc: '2.0', id, method: kind === 5 ? 'tools/list' : 'ping' }));
        // An integer id past 2^53-1 cannot be answered exactly: refused once with a null id (request_id_out_of_range).
        if (typeof id === 'number' && Number.isInteger(id) && !Number.isSafeInteger(id)) invalid++;
        else expectedIds.push(id);
      } else if (kind === 6) {
        // Not valid request ids: answered once each as Invalid Request with a null id (integers past 2^53-1
        // were already rounded by the parser and cannot be answered exactly).
        const bad = [null, { n: i }, [i], true, 1e20, 2 ** 53][Math.floor(i / 10) % 6];
        lines.push(JSON.stringify({ jsonrpc: '2.0', id: bad, method: 'ping' }));
        invalid++;
      } else if (kind === 7) {
        lines.push(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: `none-${i}` } }));
      } else if (kind === 8) {
        lines.push(JSON.stringify({ jsonrpc: '2.0', method: `notifications/unknown-${i}`, params: [i] }));
      } else {
        // A response from the client (this server never sends requests): ignored.
        lines.push(JSON.stringify({ jsonrpc: '2.0', id: `resp-${i}`, result: {} }));
      }
    }
    server.write(`${lines.join('\n')}\n`);
    const total = expectedIds.length + invalid + 1;
    await server.waitUntil(`${total} replies`, () => server.messages.length >= total);
    const replies = singles((await fence(server, 'after-pipeline')).slice(1));
    assert.equal(replies.length, expectedIds.length + invalid, 'no reply to notifications or client responses, one to everything else');
    const counts = new Map<string, number>();
    for (const reply of replies) {
      const key = JSON.stringify(reply['id']);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const id of expectedIds) assert.equal(counts.get(JSON.stringify(id)), 1, `id ${JSON.stringify(id)} answered once`);
    assert.equal(counts.get('null'), invalid);
    for (const reply of nullIdErrors(replies)) assert.equal(rpcError(reply).code, -32600);
    await finish(server);
  } finally {
    server.kill();
  }
});
