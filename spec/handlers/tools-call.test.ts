import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/rpc/negotiate.ts';
import { errorOf, initializedHarness, resultOf } from '../rpc/harness.ts';
import { at, firstText, parseObj } from '../helpers/typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';

const UUID = '123e4567-e89b-12d3-a456-426614174000';
const META_PATH = '/_meta/io.github.computer-mcp~1work-invocation';
const OLD_DATES = SUPPORTED_PROTOCOL_VERSIONS.filter((d) => d !== '2025-11-25');

/** The JSON after the summary line of the text content. */
const textData = (result: unknown): JsonObject => {
  const text = firstText(result);
  return parseObj(text.slice(text.indexOf('\n') + 1), 'the text after the summary line');
};

describe('tools/call results by date', () => {
  for (const date of SUPPORTED_PROTOCOL_VERSIONS) {
    const structured = date >= '2025-06-18';
    it(`${date}: success has summary + serialized result${structured ? ' and structuredContent' : ', no structuredContent'}`, async () => {
      const h = await initializedHarness(date);
      const result = resultOf(await h.request(1, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }));
      const expected: Record<string, unknown> = { content: [{ type: 'text', text: 'echoed second line\n{"text":"hi"}' }], isError: false };
      if (structured) expected['structuredContent'] = { result: { text: 'hi' } };
      assert.deepEqual(result, expected);
    });

    it(`${date}: a failure with a result is isError with { result, error }${structured ? ' in structuredContent too' : ''}`, async () => {
      const h = await initializedHarness(date);
      const result = resultOf(await h.request(1, 'tools/call', { name: 'fail-partial', arguments: {} }));
      const error = { code: 'timeout', message: 'The run exceeded timeout_seconds.' };
      const expected: Record<string, unknown> = {
        content: [{ type: 'text', text: `timed out\n${JSON.stringify({ error, result: { partial: true } })}` }],
        isError: true,
      };
      if (structured) expected['structuredContent'] = { result: { partial: true }, error };
      assert.deepEqual(result, expected);
    });
  }

  it('a failure without a result carries the error in text only when the outputSchema needs an object result', async () => {
    const h = await initializedHarness('2025-11-25');
    const result = resultOf(await h.request(1, 'tools/call', { name: 'fail', arguments: {} }));
    const error = { code: 'run_not_found', message: 'No retained run has this run_id.' };
    assert.deepEqual(result, {
      content: [{ type: 'text', text: `no such run\n${JSON.stringify({ error, result: null })}` }],
      isError: true,
    });
  });

  it('a tool without outputSchema gets structuredContent { result: null, error } on failure; a thrown ToolError keeps its path', async () => {
    const h = await initializedHarness('2025-11-25');
    const result = resultOf(await h.request(1, 'tools/call', { name: 'throws-tool-error', arguments: {} }));
    assert.equal(result['isError'], true);
    assert.deepEqual(result['structuredContent'], {
      result: null,
      error: { code: 'run_active', message: 'The run is still active.', path: '/run_id' },
    });
  });
});

describe('tools/call argument validation', () => {
  it('2025-11-25: a validation failure is a tool execution error naming the path, not echoing the value', async () => {
    const h = await initializedHarness('2025-11-25');
    const result = resultOf(await h.request(1, 'tools/call', { name: 'echo', arguments: { text: 'SECRET-0123456789' } }));
    assert.equal(result['isError'], true);
    assert.deepEqual(textData(result), {
      error: { code: 'invalid_arguments', message: '/text must be at most 10 characters', path: '/text' },
      result: null,
    });
    assert.ok(!JSON.stringify(result).includes('SECRET'));
    assert.equal(h.tools.contexts.length, 0, 'the tool never ran');
  });

  for (const date of OLD_DATES) {
    it(`${date}: a validation failure is -32602 with data.path`, async () => {
      const h = await initializedHarness(date);
      const response = await h.request(1, 'tools/call', { name: 'echo', arguments: { text: 'x', count: 0 } });
      assert.deepEqual(errorOf(response), { code: -32602, message: 'Invalid params: /count must be at least 1', data: { path: '/count' } });
      assert.equal(h.tools.contexts.length, 0);
    });
  }

  it('missing required, extra property and non-object arguments', async () => {
    const h = await initializedHarness('2025-11-25');
    const pathOf = async (args: unknown): Promise<unknown> =>
      at(textData(resultOf(await h.request(1, 'tools/call', { name: 'echo', arguments: args }))), 'error', 'path');
    assert.equal(await pathOf({}), '/text');
    assert.equal(await pathOf({ text: 'a', other: 1 }), '/other');
    assert.equal(await pathOf([1]), '');
    assert.equal(await pathOf(null), '');
  });

  it('absent arguments count as {}', async () => {
    const h = await initializedHarness('2025-11-25');
    assert.equal(resultOf(await h.request(1, 'tools/call', { name: 'fail' }))['isError'], true);
    assert.equal(h.tools.contexts.length, 1);
  });
});

describe('tools/call protocol errors', () => {
  for (const date of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`${date}: unknown tool is -32602 and discloses nothing`, async () => {
      const h = await initializedHarness(date);
      assert.deepEqual(errorOf(await h.request(1, 'tools/call', { name: 'SECRET-tool' })), { code: -32602, message: 'Unknown tool' });
    });
  }

  it('a missing or non-string name is -32602', async () => {
    const h = await initializedHarness('2025-11-25');
    assert.deepEqual(errorOf(await h.request(1, 'tools/call', {})), {
      code: -32602,
      message: 'Invalid params: /name must be a string',
      data: { path: '/name' },
    });
    assert.equal(errorOf(await h.request(2, 'tools/call', { name: 5 })).code, -32602);
  });
});

describe('tools/call context', () => {
  it('passes the work-invocation UUID, the date, a signal and progress only with a token', async () => {
    const h = await initializedHarness('2025-06-18');
    await h.request(1, 'tools/call', {
      name: 'echo',
      arguments: { text: 'a' },
      _meta: { 'io.github.computer-mcp/work-invocation': UUID, 'progressToken': 3 },
    });
    await h.request(2, 'tools/call', { name: 'echo', arguments: { text: 'a' } });
    const [withMeta, without] = h.tools.contexts;
    assert.equal(withMeta?.workInvocation, UUID);
    assert.equal(withMeta?.protocolVersion, '2025-06-18');
    assert.equal(typeof withMeta?.progress, 'function');
    assert.equal(withMeta?.signal.aborted, false);
    assert.equal(without?.workInvocation, null);
    assert.equal(without?.progress, undefined);
  });

  it('2025-11-25: a work-invocation that is not a UUID is an invalid_arguments tool error', async () => {
    const h = await initializedHarness('2025-11-25');
    for (const bad of ['not-a-uuid', 42, null, `${UUID} `]) {
      const result = resultOf(
        await h.request(1, 'tools/call', {
          name: 'echo',
          arguments: { text: 'a' },
          _meta: { 'io.github.computer-mcp/work-invocation': bad },
        }),
      );
      assert.equal(result['isError'], true);
      assert.deepEqual(textData(result)['error'], { code: 'invalid_arguments', message: `${META_PATH} must be a UUID`, path: META_PATH });
    }
    assert.equal(h.tools.contexts.length, 0);
  });

  it('older dates: a bad work-invocation is -32602 with the escaped path', async () => {
    const h = await initializedHarness('2025-03-26');
    const response = await h.request(1, 'tools/call', {
      name: 'echo',
      arguments: { text: 'a' },
      _meta: { 'io.github.computer-mcp/work-invocation': 'x' },
    });
    assert.deepEqual(errorOf(response).data, { path: META_PATH });
  });
});
