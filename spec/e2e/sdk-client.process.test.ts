import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/rpc/negotiate.ts';
import { FAKE, MAIN, ROOT } from './server-process.ts';
import { at, toolBody } from '../helpers/typed-results.ts';

// The SDK client always asks for its newest date; to drive each date we rewrite the outgoing
// initialize request and record what the server negotiated.
class DatedTransport extends StdioClientTransport {
  date = '';
  negotiated: unknown = undefined;
  override async send(message: JSONRPCMessage): Promise<void> {
    if ('method' in message && message.method === 'initialize' && 'id' in message) {
      const params = { ...(message.params ?? {}), protocolVersion: this.date };
      const initId = message.id;
      const previous = this.onmessage;
      this.onmessage = (incoming: JSONRPCMessage) => {
        if ('id' in incoming && incoming.id === initId && 'result' in incoming) this.negotiated = incoming.result['protocolVersion'];
        previous?.(incoming);
      };
      return super.send({ ...message, params });
    }
    return super.send(message);
  }
}

async function connect(date: string, nodeArgs: readonly string[]): Promise<{ client: Client; transport: DatedTransport }> {
  const transport = new DatedTransport({ command: process.execPath, args: [...nodeArgs], cwd: ROOT, stderr: 'pipe' });
  transport.date = date;
  const client = new Client({ name: 'sdk-interop-spec', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

describe('official SDK client over stdio, every supported date', () => {
  for (const date of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`${date}: initialize, ping, tools/list, resources/list against the real server`, async () => {
      const { client, transport } = await connect(date, MAIN);
      try {
        assert.equal(transport.negotiated, date);
        assert.deepEqual(client.getServerVersion(), { name: 'claude-run-mcp', version: '0.1.0' });
        assert.deepEqual(client.getServerCapabilities(), {
          tools: { listChanged: false },
          resources: { subscribe: false, listChanged: false },
        });
        assert.ok((client.getInstructions() ?? '').length > 0);
        assert.deepEqual(await client.ping(), {});
        assert.ok(Array.isArray((await client.listTools()).tools));
        assert.ok(Array.isArray((await client.listResources()).resources));
      } finally {
        await client.close();
      }
    });

    it(`${date}: tools/call results and errors as the SDK parses them (fake providers)`, async () => {
      const { client } = await connect(date, FAKE);
      try {
        const tools = (await client.listTools()).tools;
        assert.equal(
          tools.some((t) => 'outputSchema' in t),
          date >= '2025-06-18',
        );
        const ok = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
        assert.equal(ok.isError, false);
        assert.deepEqual(ok.structuredContent, date >= '2025-06-18' ? { result: { text: 'hi' } } : undefined);
        // Progress, then SDK-side cancellation (notifications/cancelled). A progress line immediately
        // followed by its response can be lost inside the SDK client (it handles notifications a
        // microtask late), so the call here stays open until the progress has arrived.
        const controller = new AbortController();
        const progress: unknown[] = [];
        const slow = client.callTool({ name: 'slow', arguments: {} }, undefined, {
          signal: controller.signal,
          onprogress: (p) => {
            progress.push(p);
            controller.abort();
          },
        });
        await assert.rejects(slow);
        assert.deepEqual(progress, [date >= '2025-03-26' ? { progress: 1, message: 'started' } : { progress: 1 }]);
        assert.deepEqual(await client.ping(), {}, 'the server keeps serving after the cancellation');
        if (date === '2025-11-25') {
          const bad = await client.callTool({ name: 'echo', arguments: { text: 'far too long text' } });
          assert.equal(bad.isError, true);
          assert.deepEqual(toolBody(bad), {
            error: { code: 'invalid_arguments', message: '/text must be at most 10 characters', path: '/text' },
            result: null,
          });
        } else {
          await assert.rejects(
            client.callTool({ name: 'echo', arguments: { text: 'far too long text' } }),
            (error: { code?: number }) => error.code === -32602,
          );
        }
        await assert.rejects(client.callTool({ name: 'missing', arguments: {} }), (error: { code?: number }) => error.code === -32602);
        const partial = await client.callTool({ name: 'fail-partial', arguments: {} });
        assert.equal(partial.isError, true);
        if (date >= '2025-06-18') assert.deepEqual(at(partial.structuredContent, 'error', 'code'), 'timeout');
      } finally {
        await client.close();
      }
    });
  }
});
