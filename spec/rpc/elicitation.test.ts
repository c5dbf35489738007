// Requests to the client (elicitation/create, legacy era): offered to a tool call only when the client
// declared form elicitation at initialize, sent with an id of ours, answered by routing the client's
// response, withdrawn with notifications/cancelled, failed on an error response or close, and bounded.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHarness, type Harness } from './harness.ts';
import { at } from '../helpers/typed-results.ts';
import { createOutbound, MAX_OUTBOUND_REQUESTS, OutboundError } from '../../lib/rpc/outbound.ts';
import type { CallContext } from '../../lib/mcp/types.ts';
import type { JsonObject } from '../../lib/util/json.ts';

const FORM = { mode: 'form', message: 'allow?', requestedSchema: { type: 'object', properties: { decision: { type: 'string', enum: ['allow', 'deny'] } }, required: ['decision'] } };

/** Initializes with these capabilities and returns the CallContext of one running `slow` tool call. */
async function contextOfACall(capabilities: unknown, modern = false): Promise<{ h: Harness; ctx: CallContext }> {
  const h = createHarness();
  await h.request('init', 'initialize', { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'spec', version: '0' } });
  await h.adapter.handle({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const meta = modern
    ? { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'spec', version: '0' }, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } } }
    : {};
  void h.request(1, 'tools/call', { name: 'slow', arguments: {}, ...meta });
  await h.tools.started();
  const ctx = h.tools.contexts[0];
  assert.ok(ctx);
  return { h, ctx };
}

const sent = (h: Harness, method: string): JsonObject[] => h.notifications.filter((n) => n['method'] === method);

describe('elicitation/create to the client', () => {
  it('declared (form, or {} meaning form): the call can ask; the response is routed back by id', async () => {
    for (const elicitation of [{ form: {} }, {}, { form: {}, url: {} }]) {
      const { h, ctx } = await contextOfACall({ elicitation });
      assert.ok(ctx.elicit, JSON.stringify(elicitation));
      const answer = ctx.elicit(FORM, new AbortController().signal);
      const [request] = sent(h, 'elicitation/create');
      assert.deepEqual(request, { jsonrpc: '2.0', id: 'claude-run-mcp-1', method: 'elicitation/create', params: FORM });
      assert.equal(await h.adapter.handle({ jsonrpc: '2.0', id: 'claude-run-mcp-1', result: { action: 'accept', content: { decision: 'allow' } } }), undefined, 'a response is never answered');
      assert.deepEqual(await answer, { action: 'accept', content: { decision: 'allow' } });
      h.tools.release();
    }
  });

  it('not declared, url only, or a modern-era request: no way to ask', async () => {
    for (const [capabilities, modern] of [[{}, false], [{ elicitation: { url: {} } }, false], [{ elicitation: true }, false], [{ elicitation: { form: {} } }, true]] as const) {
      const { h, ctx } = await contextOfACall(capabilities, modern);
      assert.equal(ctx.elicit, undefined, JSON.stringify([capabilities, modern]));
      h.tools.release();
    }
  });

  it('withdrawn: notifications/cancelled names our request; a late response is ignored', async () => {
    const { h, ctx } = await contextOfACall({ elicitation: {} });
    const controller = new AbortController();
    const answer = ctx.elicit!(FORM, controller.signal);
    controller.abort();
    await assert.rejects(answer, (e: unknown) => e instanceof OutboundError && e.reason === 'aborted');
    assert.deepEqual(sent(h, 'notifications/cancelled').map((n) => at(n, 'params', 'requestId')), ['claude-run-mcp-1']);
    assert.equal(await h.adapter.handle({ jsonrpc: '2.0', id: 'claude-run-mcp-1', result: { action: 'accept', content: { decision: 'allow' } } }), undefined);
    h.tools.release();
  });

  it('an error response fails the request; closing the adapter fails what is pending', async () => {
    const { h, ctx } = await contextOfACall({ elicitation: {} });
    const first = ctx.elicit!(FORM, new AbortController().signal);
    await h.adapter.handle({ jsonrpc: '2.0', id: 'claude-run-mcp-1', error: { code: -32601, message: 'no' } });
    await assert.rejects(first, (e: unknown) => e instanceof OutboundError && e.reason === 'error_response');
    const second = ctx.elicit!(FORM, new AbortController().signal);
    h.tools.release();
    await h.adapter.close();
    await assert.rejects(second, (e: unknown) => e instanceof OutboundError && e.reason === 'closed');
  });

  it(`at most ${MAX_OUTBOUND_REQUESTS} requests wait at once; the next is refused without being sent`, async () => {
    const messages: JsonObject[] = [];
    const outbound = createOutbound((m) => messages.push(m));
    const signal = new AbortController().signal;
    const pending = Array.from({ length: MAX_OUTBOUND_REQUESTS }, () => outbound.request('elicitation/create', FORM, signal));
    await assert.rejects(outbound.request('elicitation/create', FORM, signal), (e: unknown) => e instanceof OutboundError && e.reason === 'too_many');
    assert.equal(messages.length, MAX_OUTBOUND_REQUESTS);
    assert.equal(outbound.onResponse({ jsonrpc: '2.0', id: 'claude-run-mcp-1', result: {} }), true);
    assert.deepEqual(await pending[0], {});
    assert.equal(outbound.onResponse({ jsonrpc: '2.0', id: 'someone-else', result: {} }), false, 'unknown ids are not ours');
    outbound.close();
    await Promise.allSettled(pending);
  });
});
