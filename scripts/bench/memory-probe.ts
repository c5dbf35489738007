/**
 * The memory benchmark's retention probe (dev-only): the same providers and adapter as the server, in a process
 * started with --expose-gc, so the live heap can be read after full collections. Prints one JSON line.
 * Usage: node --expose-gc --import tsx scripts/bench/memory-probe.ts <bundle> <native> <finalBytes> <floodMs>
 */
import { createAdapter } from '../../lib/adapter.ts';
import { MAX_ACTIVE_RUNS, MAX_RETAINED_RUNS } from '../../lib/runs/registry.ts';
import { createProviders } from '../../lib/tools/providers.ts';

const [bundle = '', native = '', finalBytes = '0', floodMs = '0'] = process.argv.slice(2);
const collect = (globalThis as { gc?: () => void }).gc;
if (collect === undefined) throw new Error('run with --expose-gc');

const providers = createProviders({
  claudeBin: native,
  maxTimeoutSeconds: 1800,
  underscoreNames: false,
  promptViaStdin: false,
  env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.cwd() },
  cwd: process.cwd(),
  supervision: { supervisorCommand: { file: process.execPath, args: [bundle, '__supervisor'] } },
});
const adapter = createAdapter({
  toolProvider: providers.toolProvider,
  resourceProvider: providers.resourceProvider,
  onClose: providers.close,
});
let id = 0;
const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
  const response = (await adapter.handle({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } })) as {
    result: { structuredContent: { result: Record<string, unknown> } };
  };
  return response.result.structuredContent.result;
};
const liveHeap = (): number => {
  collect();
  collect();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
};

await adapter.handle({
  jsonrpc: '2.0',
  id: ++id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '0' } },
});
await call('claude.run.list', {});
const idle = liveHeap();
for (let i = 0; i < MAX_RETAINED_RUNS; i++) await call('claude.run', { prompt: `fill:${finalBytes}` });
const filled = liveHeap();
const ids = await Promise.all(
  Array.from({ length: MAX_ACTIVE_RUNS }, async () => String((await call('claude.run.start', { prompt: `timed:${floodMs}` }))['run_id'])),
);
for (const runId of ids) while ((await call('claude.run.result', { run_id: runId, wait_seconds: 30 }))['completed'] !== true);
const end = liveHeap();
await adapter.close();
process.stdout.write(`${JSON.stringify({ idle, filled, end })}\n`);
