// Requests to the client (elicitation/create, legacy era): offered to a tool call only when the client
// declared form elicitation at initialize, sent with an id of ours, answered by routing the client's
// response, withdrawn with notifications/cancelled, failed on an error response or close, and bounded.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHarness, type Harness } from './harness.ts';
import { at } from '../helpers/typed-results.ts';
import { createOutbound, MAX_OUTBOUND_REQUESTS, OutboundError } from '../../lib/rpc/outbound.ts';
import type { CallContext } from '../../lib/contracts/providers.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import { randomBytes } from 'node:crypto';
import { parseControlLine } from '../../lib/native/control.ts';
import { systemClock } from '../../lib/util/clock.ts';
import { createPermissionBroker, type DecidedQuestion } from '../../lib/permission/broker.ts';
import { askThroughElicitation } from '../../lib/permission/elicit.ts';

const FORM = {
  mode: 'form',
  message: 'allow?',
  requestedSchema: { type: 'object', properties: { decision: { type: 'string', enum: ['allow', 'deny'] } }, required: ['decision'] },
};

/** Initializes with these capabilities and returns the CallContext of one running `slow` tool call. */
async function contextOfACall(capabilities: unknown, modern = false): Promise<{ h: Harness; ctx: CallContext }> {
  const h = createHarness();
  await h.request('init', 'initialize', { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'spec', version: '0' } });
  await h.adapter.handle({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const meta = modern
    ? {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'spec', version: '0' },
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
        },
      }
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
      assert.equal(
        await h.adapter.handle({ jsonrpc: '2.0', id: 'claude-run-mcp-1', result: { action: 'accept', content: { decision: 'allow' } } }),
        undefined,
        'a response is never answered',
      );
      assert.deepEqual(await answer, { action: 'accept', content: { decision: 'allow' } });
      h.tools.release();
    }
  });

  it('not declared, url only, or a modern-era request: no way to ask', async () => {
    for (const [capabilities, modern] of [
      [{}, false],
      [{ elicitation: { url: {} } }, false],
      [{ elicitation: true }, false],
      [{ elicitation: { form: {} } }, true],
    ] as const) {
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
    assert.deepEqual(
      sent(h, 'notifications/cancelled').map((n) => at(n, 'params', 'requestId')),
      ['claude-run-mcp-1'],
    );
    assert.equal(
      await h.adapter.handle({ jsonrpc: '2.0', id: 'claude-run-mcp-1', result: { action: 'accept', content: { decision: 'allow' } } }),
      undefined,
    );
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
    await assert.rejects(
      outbound.request('elicitation/create', FORM, signal),
      (e: unknown) => e instanceof OutboundError && e.reason === 'too_many',
    );
    assert.equal(messages.length, MAX_OUTBOUND_REQUESTS);
    assert.equal(outbound.onResponse({ jsonrpc: '2.0', id: 'claude-run-mcp-1', result: {} }), true);
    assert.deepEqual(await pending[0], {});
    assert.equal(outbound.onResponse({ jsonrpc: '2.0', id: 'someone-else', result: {} }), false, 'unknown ids are not ours');
    outbound.close();
    await Promise.allSettled(pending);
  });

  /** Responses to our request id 'claude-run-mcp-1' that are not a clean JSON-RPC success, and why each fails. */
  const ACCEPT_ALLOW = { action: 'accept', content: { decision: 'allow' } };
  const NOT_A_SUCCESS: ReadonlyArray<readonly [string, JsonObject, string]> = [
    [
      'both result and error',
      { jsonrpc: '2.0', id: 'claude-run-mcp-1', result: ACCEPT_ALLOW, error: { code: 1, message: 'x' } },
      'malformed_response',
    ],
    ['both, error null', { jsonrpc: '2.0', id: 'claude-run-mcp-1', result: ACCEPT_ALLOW, error: null }, 'malformed_response'],
    ['neither result nor error', { jsonrpc: '2.0', id: 'claude-run-mcp-1' }, 'malformed_response'],
    ['no jsonrpc', { id: 'claude-run-mcp-1', result: ACCEPT_ALLOW }, 'malformed_response'],
    ['jsonrpc 1.0', { jsonrpc: '1.0', id: 'claude-run-mcp-1', result: ACCEPT_ALLOW }, 'malformed_response'],
    ['result an array', { jsonrpc: '2.0', id: 'claude-run-mcp-1', result: [ACCEPT_ALLOW] }, 'malformed_response'],
    ['result null', { jsonrpc: '2.0', id: 'claude-run-mcp-1', result: null }, 'malformed_response'],
    ['result a string', { jsonrpc: '2.0', id: 'claude-run-mcp-1', result: 'accept' }, 'malformed_response'],
    ['an error only', { jsonrpc: '2.0', id: 'claude-run-mcp-1', error: { code: -32601, message: 'no' } }, 'error_response'],
  ];

  it('a response that is not a clean success fails the request and is never answered', async () => {
    for (const [label, response, reason] of NOT_A_SUCCESS) {
      const { h, ctx } = await contextOfACall({ elicitation: {} });
      const answer = ctx.elicit!(FORM, new AbortController().signal);
      assert.equal(await h.adapter.handle(response), undefined, `${label}: no reply to a response`);
      await assert.rejects(answer, (e: unknown) => e instanceof OutboundError && e.reason === reason, label);
      h.tools.release();
    }
  });

  it('a permission question answered by any of those responses is denied, never allowed', async () => {
    for (const [label, response] of NOT_A_SUCCESS) {
      const { h, ctx } = await contextOfACall({ elicitation: {} });
      const broker = createPermissionBroker({ clock: systemClock, random: (n) => randomBytes(n), boundMs: 30_000 });
      const written: string[] = [];
      try {
        askThroughElicitation(broker, 'run_spec', ctx.elicit!);
        const decided = new Promise<DecidedQuestion>((resolve) => broker.onDecision(resolve));
        const request = parseControlLine({
          type: 'control_request',
          request_id: 'req-1',
          request: { subtype: 'can_use_tool', tool_name: 'Bash', input: { command: 'rm -rf x' }, tool_use_id: 'toolu_1' },
        });
        assert.ok(request?.kind === 'can_use_tool');
        broker.ask(request, (line) => written.push(line) > 0);
        assert.equal(sent(h, 'elicitation/create').length, 1, label);
        await h.adapter.handle(response);
        const decision = await decided;
        assert.deepEqual([decision.behavior, decision.decided_by], ['deny', 'host'], label);
        assert.equal(written.length, 1, `${label}: one answer to the native`);
        assert.equal(JSON.parse(written[0] ?? '{}').response.response.behavior, 'deny', label);
      } finally {
        broker.close();
        h.tools.release();
      }
    }
  });
});
