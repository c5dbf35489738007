// Small in-spec tool and resource hosts that exercise every path of the protocol core.
import type { CallContext, JsonSchema, ResourceHost, ToolDefinition, ToolHost, ToolOutcome } from '../../lib/mcp/types.ts';
import { ResourceError } from '../../lib/mcp/types.ts';
import { ToolError } from '../../lib/tool-errors.ts';
import type { JsonObject } from '../../lib/util/json.ts';

export const ECHO_INPUT: JsonSchema = {
  type: 'object',
  properties: { text: { type: 'string', maxLength: 10 }, count: { type: 'integer', minimum: 1 } },
  required: ['text'],
  additionalProperties: false,
};

const tool = (name: string, inputSchema: JsonSchema = { type: 'object', additionalProperties: false }): ToolDefinition => ({
  name,
  title: `Title of ${name}`,
  description: `The ${name} tool`,
  inputSchema,
  outputSchema: { type: 'object', properties: { result: { type: 'object' } } },
  annotations: { readOnlyHint: true },
  _meta: { 'io.github.computer-mcp/risk': 'read-only' },
});

export interface FakeToolHost extends ToolHost {
  /** Every CallContext a call received, in order. */
  readonly contexts: CallContext[];
  /** Resolves the pending `slow` call(s) with a success. */
  release(): void;
  /** Resolves once a `slow` call has started. */
  started(): Promise<void>;
}

export function createFakeToolHost(): FakeToolHost {
  const contexts: CallContext[] = [];
  let releaseSlow: (() => void)[] = [];
  let startedWaiters: (() => void)[] = [];
  let startedCount = 0;
  const definitions = [tool('echo', ECHO_INPUT), tool('fail'), tool('slow'), tool('throws'), tool('throws-tool-error'), tool('progress-after')];
  return {
    contexts,
    list: () => definitions,
    release() { const r = releaseSlow; releaseSlow = []; for (const f of r) f(); },
    started() {
      if (startedCount > 0) return Promise.resolve();
      return new Promise((resolve) => { startedWaiters.push(resolve); });
    },
    async call(name: string, args: JsonObject, ctx: CallContext): Promise<ToolOutcome> {
      contexts.push(ctx);
      switch (name) {
        case 'echo':
          return { ok: true, summary: 'echoed\nsecond line', result: { text: args['text'] ?? null } };
        case 'fail':
          return { ok: false, summary: 'no such run', error: { code: 'run_not_found', message: 'No retained run has this run_id.' }, result: null };
        case 'throws':
          throw new Error('secret internal detail at /home/someone/file.ts:12');
        case 'throws-tool-error':
          throw new ToolError('run_active', 'The run is still active.', '/run_id');
        case 'progress-after': {
          const progress = ctx.progress;
          ctx.progress?.('one');
          setImmediate(() => progress?.('late'));
          return { ok: true, summary: 'done', result: {} };
        }
        case 'slow': {
          ctx.progress?.('started');
          startedCount++;
          const waiters = startedWaiters;
          startedWaiters = [];
          for (const w of waiters) w();
          await new Promise<void>((resolve) => {
            releaseSlow.push(resolve);
            ctx.signal.addEventListener('abort', () => resolve(), { once: true });
          });
          startedCount--;
          if (ctx.signal.aborted) {
            return { ok: false, summary: 'cancelled', error: { code: 'cancelled', message: 'cancelled' }, result: null };
          }
          return { ok: true, summary: 'slow done', result: { slow: true } };
        }
        default:
          throw new Error(`fake host has no ${name}`);
      }
    },
  };
}

export const WORK_URI = 'computer-mcp://runtime/work/v1';

export function createFakeResourceHost(): ResourceHost {
  return {
    list: () => [
      { uri: WORK_URI, name: 'work', title: 'Work snapshot', description: 'The work snapshot', mimeType: 'application/json' },
      { uri: 'fake://busy', name: 'busy', description: 'Never readable', mimeType: 'application/json' },
      { uri: 'fake://broken', name: 'broken', description: 'Throws a bug', mimeType: 'application/json' },
    ],
    read(uri) {
      if (uri === WORK_URI) return '{"revision":1}';
      if (uri === 'fake://busy') throw new ResourceError('snapshot_incomplete', 'The work snapshot is incomplete.');
      throw new Error('secret /internal/path');
    },
  };
}
