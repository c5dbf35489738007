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

/** The bridge's state: the CLI's calls waiting for a decision, and its link to the broker. */
interface BridgeState {
  readonly token: string;
  /** The broker answers within its bound; this only covers a broker that went silent. */
  readonly ownBoundMs: number;
  readonly pending: Map<string, Pending>;
  seq: number;
  broker: Socket | null;
  brokerUp: boolean;
  /** Asks made before the socket connected wait for it (bounded by the pending questions' own deadlines). */
  queued: BridgeMessage[] | null;
}

export function runPermissionBridge(env: Readonly<Record<string, string | undefined>> = process.env): void {
  const socketPath = env[BRIDGE_ENV.socket] ?? '';
  const token = env[BRIDGE_ENV.token] ?? '';
  const boundMs = Number(env[BRIDGE_ENV.boundMs]);
  const ownBoundMs = (Number.isSafeInteger(boundMs) && boundMs > 0 ? boundMs : 60_000) + BRIDGE_MARGIN_MS;
  const st: BridgeState = { token, ownBoundMs, pending: new Map(), seq: 0, broker: null, brokerUp: false, queued: [] };
  if (socketPath !== '') connectBroker(st, socketPath);
  const stdin = createLineSplitter({
    maxLineBytes: MAX_BRIDGE_STDIN_LINE_BYTES,
    onLine: (line) => {
      const msg = parseRpcObject(line);
      if (msg !== null) onRpc(st, msg);
    },
    onOversize: () => {},
  });
  process.stdin.on('data', (chunk: Buffer) => stdin.push(chunk));
  process.stdin.on('end', () => {
    st.broker?.destroy();
    process.exit(0);
  });
  // The CLI ends its MCP servers with SIGINT then SIGTERM (no stdin EOF): leave at once.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => {
      st.broker?.destroy();
      process.exit(0);
    });
}

function send(message: unknown): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** Answers the CLI's call `id` (once; later decisions of it do nothing). */
function decide(st: BridgeState, id: string, behavior: 'allow' | 'deny', message: string): void {
  const p = st.pending.get(id);
  if (p === undefined) return;
  st.pending.delete(id);
  clearTimeout(p.timer);
  send({ jsonrpc: '2.0', id: p.rpcId, result: { content: [{ type: 'text', text: nativeDecisionText(behavior, p.input, message) }] } });
}

function denyAll(st: BridgeState, message: string): void {
  for (const id of [...st.pending.keys()]) decide(st, id, 'deny', message);
}

/** Sends (or queues until connected) a message to the broker; false when there is no broker to reach. */
function toBroker(st: BridgeState, message: BridgeMessage): boolean {
  if (st.broker === null) return false;
  if (!st.brokerUp) {
    if (st.queued === null) return false;
    st.queued.push(message);
    return true;
  }
  st.broker.write(`${JSON.stringify(message)}\n`);
  return true;
}

function connectBroker(st: BridgeState, socketPath: string): void {
  const socket = process.getBuiltinModule('node:net').connect(socketPath);
  st.broker = socket;
  socket.on('connect', () => {
    st.brokerUp = true;
    socket.write(`${JSON.stringify({ t: 'hello', token: st.token })}\n`);
    for (const message of st.queued ?? []) socket.write(`${JSON.stringify(message)}\n`);
    st.queued = null;
  });
  const lines = createLineSplitter({
    maxLineBytes: MAX_BRIDGE_LINE_BYTES,
    onLine: (line) => {
      const decision = parseDecisionMessage(line.toString('utf8'));
      if (decision === null) {
        // Malformed answers are denials; the connection is no longer trusted.
        denyAll(st, 'claude-run-mcp: the permission broker sent a malformed answer; denied.');
        socket.destroy();
        return;
      }
      decide(st, decision.id, decision.behavior, decision.message);
    },
    onOversize: () => {
      denyAll(st, 'claude-run-mcp: the permission broker sent an oversized answer; denied.');
      socket.destroy();
    },
  });
  socket.on('data', (chunk: Buffer) => lines.push(chunk));
  socket.on('error', () => {});
  socket.on('close', () => {
    st.brokerUp = false;
    st.queued = null;
    denyAll(st, 'claude-run-mcp: the run is no longer asking (its broker closed); denied.');
  });
}

/** One JSON object per line from the CLI; anything else is ignored (null). */
function parseRpcObject(line: Buffer): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(line.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    return parsed as Record<string, unknown>;
  } catch {
    return null;
  }
}

function onRpc(st: BridgeState, msg: Record<string, unknown>): void {
  const id = msg['id'];
  const method = msg['method'];
  const params = typeof msg['params'] === 'object' && msg['params'] !== null ? (msg['params'] as Record<string, unknown>) : {};
  const hasId = typeof id === 'string' || typeof id === 'number';
  if (method === 'initialize' && hasId) {
    const version = typeof params['protocolVersion'] === 'string' ? params['protocolVersion'] : '2025-11-25';
    send({
      jsonrpc: '2.0',
      id,
      result: { protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: BRIDGE_SERVER, version: '1' } },
    });
  } else if (method === 'tools/list' && hasId) {
    send({
      jsonrpc: '2.0',
      id,
      result: {
        tools: [
          {
            name: BRIDGE_TOOL,
            description: 'Permission prompts of this run, answered by the person at the MCP client of claude-run-mcp.',
            inputSchema: { type: 'object', additionalProperties: true },
          },
        ],
      },
    });
  } else if (method === 'tools/call' && hasId) {
    onCall(st, id, params);
  } else if (method === 'notifications/cancelled') {
    onCancelled(st, params['requestId']);
  } else if (hasId) {
    // Includes the server/discover probe: a silent server would stall the CLI's start.
    send({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${String(method).slice(0, 64)}` } });
  }
}

function onCall(st: BridgeState, rpcId: string | number, params: Record<string, unknown>): void {
  const args = params['arguments'];
  const a = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  const input = typeof a['input'] === 'object' && a['input'] !== null && !Array.isArray(a['input']) ? (a['input'] as JsonObject) : {};
  st.seq += 1;
  const id = `q${st.seq}`;
  const timer = setTimeout(
    () => decide(st, id, 'deny', `claude-run-mcp: no answer within ${Math.round(st.ownBoundMs / 1000)} s; denied.`),
    st.ownBoundMs,
  );
  st.pending.set(id, { rpcId, input, timer });
  if (params['name'] !== BRIDGE_TOOL || typeof a['tool_name'] !== 'string' || typeof a['tool_use_id'] !== 'string') {
    decide(st, id, 'deny', 'claude-run-mcp: malformed permission request; denied.');
    return;
  }
  const asked = toBroker(st, { t: 'ask', id, tool_name: a['tool_name'], input, tool_use_id: a['tool_use_id'] });
  if (!asked) decide(st, id, 'deny', 'claude-run-mcp: the run cannot ask its host (broker unreachable); denied.');
}

/** The CLI gave up on a call (its timeout or an interrupt): void the question at the broker. */
function onCancelled(st: BridgeState, requestId: unknown): void {
  for (const [qid, p] of st.pending) {
    if (p.rpcId !== requestId) continue;
    st.pending.delete(qid);
    clearTimeout(p.timer);
    toBroker(st, { t: 'withdraw', id: qid });
  }
}
