/**
 * The permission bridge: a private role of this package, started by the nested CLI as the stdio MCP
 * server named in its --mcp-config, serving the one tool named by --permission-prompt-tool. It relays
 * each permission prompt to the broker of its run over the Unix socket given in its environment, and it
 * always answers the CLI itself: deny when the broker is unreachable, closes, sends garbage, or does not
 * decide within the bound. Zero dependencies; the only effects are stdin/stdout and the socket.
 */
import type { Socket } from 'node:net';
import { createLineSplitter } from '../util/line-splitter.ts';
import type { JsonObject } from '../util/json.ts';
import { MAX_BRIDGE_LINE_BYTES, nativeDecisionText, parseDecisionMessage, type BridgeMessage } from './wire.ts';
import { BRIDGE_ENV, BRIDGE_MARGIN_MS, BRIDGE_TOOL, BRIDGE_SERVER } from './spec.ts';

/** An MCP line from the CLI longer than this is dropped (the CLI's permission calls are far smaller). */
export const MAX_BRIDGE_STDIN_LINE_BYTES = 8 * 1024 * 1024;

interface Pending {
  readonly rpcId: string | number;
  readonly input: JsonObject;
  readonly timer: NodeJS.Timeout;
}

export function runPermissionBridge(env: Readonly<Record<string, string | undefined>> = process.env): void {
  const socketPath = env[BRIDGE_ENV.socket] ?? '';
  const token = env[BRIDGE_ENV.token] ?? '';
  const boundMs = Number(env[BRIDGE_ENV.boundMs]);
  // The broker answers within boundMs; this only covers a broker that went silent.
  const ownBoundMs = (Number.isSafeInteger(boundMs) && boundMs > 0 ? boundMs : 60_000) + BRIDGE_MARGIN_MS;
  const pending = new Map<string, Pending>();
  let seq = 0;
  let broker: Socket | null = null;
  let brokerUp = false;
  // Asks made before the socket connected wait for it (bounded by the pending questions' own deadlines).
  let queued: BridgeMessage[] | null = [];

  const send = (message: unknown): void => { process.stdout.write(`${JSON.stringify(message)}\n`); };
  const decide = (id: string, behavior: 'allow' | 'deny', message: string): void => {
    const p = pending.get(id);
    if (p === undefined) return;
    pending.delete(id);
    clearTimeout(p.timer);
    send({ jsonrpc: '2.0', id: p.rpcId, result: { content: [{ type: 'text', text: nativeDecisionText(behavior, p.input, message) }] } });
  };
  const denyAll = (message: string): void => { for (const id of [...pending.keys()]) decide(id, 'deny', message); };
  const toBroker = (message: BridgeMessage): boolean => {
    if (broker === null) return false;
    if (!brokerUp) {
      if (queued === null) return false;
      queued.push(message);
      return true;
    }
    broker.write(`${JSON.stringify(message)}\n`);
    return true;
  };

  if (socketPath !== '') {
    const socket = process.getBuiltinModule('node:net').connect(socketPath);
    broker = socket;
    socket.on('connect', () => {
      brokerUp = true;
      socket.write(`${JSON.stringify({ t: 'hello', token })}\n`);
      for (const message of queued ?? []) socket.write(`${JSON.stringify(message)}\n`);
      queued = null;
    });
    const lines = createLineSplitter({
      maxLineBytes: MAX_BRIDGE_LINE_BYTES,
      onLine: (line) => {
        const decision = parseDecisionMessage(line.toString('utf8'));
        if (decision === null) {
          // Malformed answers are denials; the connection is no longer trusted.
          denyAll('claude-run-mcp: the permission broker sent a malformed answer; denied.');
          socket.destroy();
          return;
        }
        decide(decision.id, decision.behavior, decision.message);
      },
      onOversize: () => { denyAll('claude-run-mcp: the permission broker sent an oversized answer; denied.'); socket.destroy(); },
    });
    socket.on('data', (chunk: Buffer) => lines.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      brokerUp = false;
      queued = null;
      denyAll('claude-run-mcp: the run is no longer asking (its broker closed); denied.');
    });
  }

  const onCall = (rpcId: string | number, params: Record<string, unknown>): void => {
    const args = params['arguments'];
    const a = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
    const input = typeof a['input'] === 'object' && a['input'] !== null && !Array.isArray(a['input']) ? (a['input'] as JsonObject) : {};
    seq += 1;
    const id = `q${seq}`;
    const timer = setTimeout(() => decide(id, 'deny', `claude-run-mcp: no answer within ${Math.round(ownBoundMs / 1000)} s; denied.`), ownBoundMs);
    pending.set(id, { rpcId, input, timer });
    if (params['name'] !== BRIDGE_TOOL || typeof a['tool_name'] !== 'string' || typeof a['tool_use_id'] !== 'string') {
      decide(id, 'deny', 'claude-run-mcp: malformed permission request; denied.');
      return;
    }
    const asked = toBroker({ t: 'ask', id, tool_name: a['tool_name'], input, tool_use_id: a['tool_use_id'] });
    if (!asked) decide(id, 'deny', 'claude-run-mcp: the run cannot ask its host (broker unreachable); denied.');
  };

  const stdin = createLineSplitter({
    maxLineBytes: MAX_BRIDGE_STDIN_LINE_BYTES,
    onLine: (line) => {
      let msg: Record<string, unknown>;
      try {
        const parsed: unknown = JSON.parse(line.toString('utf8'));
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return;
        msg = parsed as Record<string, unknown>;
      } catch {
        return;
      }
      const id = msg['id'];
      const method = msg['method'];
      const params = typeof msg['params'] === 'object' && msg['params'] !== null ? (msg['params'] as Record<string, unknown>) : {};
      const hasId = typeof id === 'string' || typeof id === 'number';
      if (method === 'initialize' && hasId) {
        const version = typeof params['protocolVersion'] === 'string' ? params['protocolVersion'] : '2025-11-25';
        send({ jsonrpc: '2.0', id, result: { protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: BRIDGE_SERVER, version: '1' } } });
      } else if (method === 'tools/list' && hasId) {
        send({ jsonrpc: '2.0', id, result: { tools: [{ name: BRIDGE_TOOL, description: 'Permission prompts of this run, answered by the person at the MCP client of claude-run-mcp.', inputSchema: { type: 'object', additionalProperties: true } }] } });
      } else if (method === 'tools/call' && hasId) {
        onCall(id, params);
      } else if (method === 'notifications/cancelled') {
        // The CLI gave up on a call (its timeout or an interrupt): void the question at the broker.
        const requestId = params['requestId'];
        for (const [qid, p] of pending) {
          if (p.rpcId !== requestId) continue;
          pending.delete(qid);
          clearTimeout(p.timer);
          toBroker({ t: 'withdraw', id: qid });
        }
      } else if (hasId) {
        // Includes the server/discover probe: a silent server would stall the CLI's start.
        send({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${String(method).slice(0, 64)}` } });
      }
    },
    onOversize: () => {},
  });
  process.stdin.on('data', (chunk: Buffer) => stdin.push(chunk));
  process.stdin.on('end', () => { broker?.destroy(); process.exit(0); });
  // The CLI ends its MCP servers with SIGINT then SIGTERM (no stdin EOF): leave at once.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => { broker?.destroy(); process.exit(0); });
}
