/**
 * Schema fuzz of every tool's arguments, generated from the schemas tools/list advertises: each invalid call
 * gets a clean validation error naming the JSON Pointer path of the offence, and never echoes a submitted
 * value (every value carries a unique marker, and no marker may appear anywhere in the response).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonSchema } from '../../lib/contracts/providers.ts';
import { WORK_INVOCATION_META_KEY } from '../../lib/handlers/tools-call.ts';
import { createToolHarness, toolErrorOf, type ToolHarness } from '../helpers/tool-harness.ts';
import { at, callToolResultOf, obj, objs, parseObj, rpcError, rpcResult, str, toolBody } from '../helpers/typed-results.ts';
import { baseArgs, createRandom, objectCases, type InvalidCase } from './schema-cases.ts';

const SEED = 0x5eed_0009;
const RANDOM_CASES_PER_TOOL = 150;
const MARKER_RE = /MRK\d+Q[a-z0-9]+/g;

function markers(random: () => number): () => string {
  let n = 0;
  return () => `MRK${n++}Q${Math.floor(random() * 2 ** 32).toString(36)}`;
}

function randomJson(random: () => number, marker: () => string, depth: number): unknown {
  const pick = Math.floor(random() * (depth > 0 ? 9 : 6));
  switch (pick) {
    case 0:
      return marker();
    case 1:
      return `-${marker()}`;
    case 2:
      return Math.floor(random() * 4000) - 2000;
    case 3:
      return random() * 1e6 - 5e5;
    case 4:
      return random() < 0.5;
    case 5:
      return null;
    case 6:
      return Array.from({ length: Math.floor(random() * 40) }, () => randomJson(random, marker, depth - 1));
    case 7:
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [marker(), randomJson(random, marker, depth - 1)]));
    default:
      return `${marker()}${'z'.repeat(Math.floor(random() * 20000))}`;
  }
}

function randomCase(
  schema: JsonSchema,
  random: () => number,
  marker: () => string,
  i: number,
): InvalidCase & { readonly args: Record<string, unknown> } {
  const args: Record<string, unknown> = baseArgs(schema, marker);
  for (const name of Object.keys(schema.properties ?? {})) if (random() < 0.3) args[name] = randomJson(random, marker, 3);
  // Always at least one certain offence, so no random call ever starts a run.
  args[`zz_unknown_${i}`] = randomJson(random, marker, 2);
  return { label: `random #${i}`, args, path: '' };
}

interface Checked {
  readonly path: string;
  readonly text: string;
}

async function callInvalid(h: ToolHarness, version: string, tool: string, args: unknown, meta?: Record<string, unknown>): Promise<Checked> {
  const response = obj(
    await h.adapter.handle({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: tool, arguments: args, ...(meta ? { _meta: meta } : {}) },
    }),
    'tools/call response',
  );
  const text = JSON.stringify(response);
  if (version >= '2025-11-25') {
    const result = callToolResultOf(rpcResult(response));
    assert.equal(result.isError, true, text.slice(0, 300));
    const error = toolErrorOf(toolBody(result)['error']);
    assert.equal(error?.code, 'invalid_arguments', text.slice(0, 300));
    return { path: str(error.path, "the refusal's path"), text };
  }
  const error = rpcError(response);
  assert.equal(error.code, -32602, text.slice(0, 300));
  return { path: str(at(error.data, 'path'), 'error.data.path'), text };
}

function assertNoEcho(text: string, label: string): void {
  const echoed = text.match(MARKER_RE);
  assert.equal(echoed, null, `${label}: a submitted value was echoed: ${echoed?.slice(0, 3).join(', ')}`);
}

for (const version of ['2025-11-25', '2025-06-18', '2024-11-05']) {
  test(`schema fuzz (${version}): every invalid argument is refused with its path and no echo`, async (t) => {
    const h = await createToolHarness({ protocolVersion: version });
    const random = createRandom(SEED);
    const marker = markers(random);
    let checked = 0;
    try {
      // The host's own definitions, typed; tools/list advertises exactly these schemas (checked first).
      const tools = h.providers.toolProvider.list();
      assert.equal(tools.length, 11);
      const advertised = objs(rpcResult(await h.request('tools/list'))['tools'], 'tools');
      assert.deepEqual(
        advertised.map((t) => [t['name'], t['inputSchema']]),
        tools.map((t) => [t.name, t.inputSchema]),
      );
      for (const tool of tools) {
        const schema = tool.inputSchema;
        const base = baseArgs(schema, marker);
        const cases = [
          ...objectCases(schema, base, marker),
          { label: 'arguments is an array', args: [marker(), { [marker()]: marker() }], path: '' },
          { label: 'arguments is a string', args: marker(), path: '' },
        ];
        for (const c of cases) {
          const got = await callInvalid(h, version, tool.name, c.args);
          assert.equal(got.path, c.path, `${tool.name} ${c.label}`);
          assertNoEcho(got.text, `${tool.name} ${c.label}`);
          checked++;
        }
        const meta = await callInvalid(h, version, tool.name, base, { [WORK_INVOCATION_META_KEY]: `${marker()}-not-a-uuid` });
        assert.equal(meta.path, `/_meta/${WORK_INVOCATION_META_KEY.replaceAll('/', '~1')}`);
        assertNoEcho(meta.text, `${tool.name} _meta`);
        for (let i = 0; i < RANDOM_CASES_PER_TOOL; i++) {
          const c = randomCase(schema, random, marker, i);
          const got = await callInvalid(h, version, tool.name, c.args);
          const first = got.path.split('/')[1] ?? '';
          const keys = [...Object.keys(c.args), ...(schema.required ?? [])].map((k) => k.replaceAll('~', '~0').replaceAll('/', '~1'));
          assert.ok(
            got.path.startsWith('/') && keys.includes(first),
            `${tool.name} ${c.label}: path ${got.path} names no submitted property`,
          );
          assertNoEcho(got.text, `${tool.name} ${c.label}`);
          checked++;
        }
      }
      // Nothing was started by any of them.
      const listed = await h.call('claude.run.list', {});
      // Before structuredContent (2024-11-05) the text after the summary line is the result object itself.
      const body = listed.result ?? parseObj(listed.text.slice(listed.text.indexOf('\n') + 1), 'the claude.run.list text');
      assert.equal(body['retained'], 0);
      t.diagnostic(`${checked} invalid calls checked (seed ${SEED})`);
    } finally {
      await h.close();
    }
  });
}
