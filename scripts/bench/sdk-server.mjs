#!/usr/bin/env node
// The comparison point of the cold-start benchmark (dev-only): a minimal stdio MCP server on the official
// TypeScript SDK with one tool. Plain JS, run by node directly, as an SDK server usually ships.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'sdk-bench', version: '0.0.0' });
server.registerTool('echo', { description: 'Returns a fixed text.' }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
await server.connect(new StdioServerTransport());
