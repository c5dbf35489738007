// How long the pinned Claude Code 2.1.332 waits for a stdio server's answer to its server/discover probe
// before it gives up on the 2026-07-28 era and sends initialize on the same process (a legacy session:
// no tasks, no per-request _meta). The server is fixtures/slow-start-server.mjs, which answers nothing for
// a given time after its spawn and logs when each request came; the probe is written at spawn, so the time
// from spawn to the initialize that follows it is the deadline itself: `min(3000, MCP_TIMEOUT / 3)` ms in
// the binary, so 3,000 ms unless MCP_TIMEOUT is set below 9 s. Each case names its server differently:
// the CLI remembers a server it once saw as legacy and may skip waiting for it next time.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync, readFileSync } from 'node:fs';
import { jsonLines, num, str } from '../helpers/typed-results.ts';
import { startFakeAnthropic, type FakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import { createNativeSandbox, pollUntilGone, type NativeSandbox } from '../helpers/native-env.ts';
import { runClaude, STREAM_JSON_ARGS } from './direct-claude.ts';
import { describeProcesses, LEAK_POLL_MS } from './adapter-tier.ts';

const SLOW = fileURLToPath(new URL('../../fixtures/slow-start-server.mjs', import.meta.url));
/** The probe's bound in 2.1.332 (`vg = 3000` in the binary), with MCP_TIMEOUT unset or 9 s and more. */
const PROBE_DEADLINE_MS = 3_000;
/**
 * A timer never fires early, but the gap starts when the tap notes its own start, after its Node boot: the CLI's
 * timer started at the spawn, earlier by that boot (seen 176 ms short with two suites at once under c8). Still
 * far below the 2 s between the bounds this spec tells apart.
 */
const EARLY_SLACK_MS = 600;
/** A loaded machine fires the CLI's timer late: a gap may exceed its bound by this much (a liveness bound). */
const LATE_SLACK_MS = 1_500;
/** One CLI start, a probe (at most ~3 s), one text turn: only a hang gets near this. */
const HOST_DEADLINE_MS = 60_000;

const assertNear = (gapMs: number, boundMs: number, what: string): void => {
  assert.ok(gapMs >= boundMs - EARLY_SLACK_MS && gapMs <= boundMs + LATE_SLACK_MS, `${what} waited ${gapMs} ms (its bound: ${boundMs} ms)`);
};

interface Received {
  readonly atMs: number;
  readonly method: string;
}
describe('Claude Code 2.1.332: the server/discover deadline for a stdio server', () => {
  let fake: FakeAnthropic;
  let sandbox: NativeSandbox;
  before(async () => {
    fake = await startFakeAnthropic({ scenario: { kind: 'text', text: 'ok' } });
    sandbox = await createNativeSandbox({ baseUrl: fake.url });
  });
  after(async () => {
    try {
      assert.deepEqual(describeProcesses(await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS)), []);
    } finally {
      await fake.close();
      await sandbox.cleanup();
    }
  });

  /** One `claude -p` whose only MCP server answers startDelayMs after its spawn; the requests it received. */
  async function probe(label: string, startDelayMs: number, env: Record<string, string> = {}): Promise<Received[]> {
    const log = join(sandbox.root, `${label}-requests.jsonl`);
    const config = join(sandbox.root, `${label}-mcp.json`);
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: { [`slow-${label}`]: { type: 'stdio', command: process.execPath, args: [SLOW, String(startDelayMs), log] } },
      }),
    );
    const run = await runClaude(
      { ...sandbox, env: { ...sandbox.env, ENABLE_TOOL_SEARCH: 'false', ...env } },
      [...STREAM_JSON_ARGS, '--mcp-config', config, '--strict-mcp-config', '--', `hello ${label}`],
      HOST_DEADLINE_MS,
    );
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.ok(existsSync(log), 'the server was started and asked');
    return jsonLines(readFileSync(log, 'utf8'), 'request log line').map((r, i) => ({
      atMs: num(r['at_ms'], `line ${i + 1}: at_ms`),
      method: str(r['method'], `line ${i + 1}: method`),
    }));
  }

  /** The methods in the order they came, and when initialize came after the spawn (null: never). */
  const read = (received: readonly Received[]): { methods: string[]; gapMs: number | null } => {
    assert.equal(received[0]?.method, 'server/discover', 'the host probed first');
    return { methods: received.map((r) => r.method), gapMs: received.find((r) => r.method === 'initialize')?.atMs ?? null };
  };

  it('a server that answers within the deadline (0.5 s after its start) gets the 2026-07-28 era: no initialize', async (t) => {
    const { methods, gapMs } = read(await probe('in-time', 500));
    t.diagnostic(`methods: ${methods.join(', ')}`);
    assert.equal(gapMs, null, `no initialize: ${methods.join(', ')}`);
    assert.ok(methods.includes('tools/list'), 'the tools were listed without a handshake');
  });

  it('a server that answers after it (3 s late) is legacy for the session: initialize 3 s after the spawn', async (t) => {
    const { methods, gapMs } = read(await probe('late', PROBE_DEADLINE_MS * 2));
    t.diagnostic(`spawn → initialize: ${gapMs} ms; methods: ${methods.join(', ')}`);
    assert.ok(gapMs !== null, `an initialize followed the unanswered probe: ${methods.join(', ')}`);
    assertNear(gapMs, PROBE_DEADLINE_MS, 'the probe');
    assert.ok(methods.includes('notifications/initialized') && methods.includes('tools/list'), 'the legacy handshake, then the tools');
  });

  it('MCP_TIMEOUT sets it: a third of it (12 s: capped at 3 s; 3 s: 1 s)', async (t) => {
    for (const [timeoutMs, expectedMs] of [
      [12_000, PROBE_DEADLINE_MS],
      [3_000, 1_000],
    ] as const) {
      const { methods, gapMs } = read(await probe(`timeout-${timeoutMs}`, expectedMs + 1_500, { MCP_TIMEOUT: String(timeoutMs) }));
      t.diagnostic(`MCP_TIMEOUT=${timeoutMs}: spawn → initialize: ${gapMs} ms; methods: ${methods.join(', ')}`);
      assert.ok(gapMs !== null, `an initialize followed the unanswered probe: ${methods.join(', ')}`);
      assertNear(gapMs, expectedMs, `MCP_TIMEOUT=${timeoutMs}: the probe`);
    }
  });
});
