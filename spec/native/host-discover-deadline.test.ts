// How long the pinned Claude Code 2.1.332 waits for a stdio server's answer to its server/discover probe
// before it gives up on the 2026-07-28 era and sends initialize on the same process (a legacy session:
// no tasks, no per-request _meta). The server is fixtures/slow-start-server.mjs, which reads nothing for a
// given time after its start; the tap in front of it logs when the host sent each line, so the gap between
// the probe and the initialize that follows it is the deadline itself: `min(3000, MCP_TIMEOUT / 3)` ms in
// the binary, which with MCP_TIMEOUT unset is 1,667 ms (MCP_TIMEOUT defaults to 5 s), counted from the
// probe, which goes out within milliseconds of the spawn. Each case names its server differently: the CLI
// remembers a server it once saw as legacy and skips waiting for it next time.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { at } from '../helpers/typed-results.ts';
import { readWireLog, wireMessages, type WireMessage } from './wire-tap-log.ts';
import { startFakeAnthropic, type FakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import { createNativeSandbox, pollUntilGone, type NativeSandbox } from '../helpers/native-env.ts';
import { runClaude, STREAM_JSON_ARGS } from './direct-claude.ts';
import { describeProcesses, LEAK_POLL_MS } from './adapter-tier.ts';

const TAP = fileURLToPath(new URL('../../fixtures/mcp-wire-tap.mjs', import.meta.url));
const SLOW = fileURLToPath(new URL('../../fixtures/slow-start-server.mjs', import.meta.url));
/** The probe's bound in 2.1.332 with MCP_TIMEOUT unset: a third of its 5 s default. */
const PROBE_DEADLINE_MS = 1_667;
/** Its cap (`vg = 3000` in the binary), reached with MCP_TIMEOUT of 9 s or more. */
const PROBE_DEADLINE_CAP_MS = 3_000;
/** A timer never fires early, so a gap is at most this much below its bound (both lines pass the same tap). */
const EARLY_SLACK_MS = 100;
/** A loaded machine fires the CLI's timer late: a gap may exceed its bound by this much (a liveness bound). */
const LATE_SLACK_MS = 1_500;
/** One CLI start, a probe (at most ~3 s), one text turn: only a hang gets near this. */
const HOST_DEADLINE_MS = 60_000;

const assertNear = (gapMs: number, boundMs: number, what: string): void => {
  assert.ok(gapMs >= boundMs - EARLY_SLACK_MS && gapMs <= boundMs + LATE_SLACK_MS, `${what} waited ${gapMs} ms (its bound: ${boundMs} ms)`);
};

const method = (m: WireMessage): string | undefined => (m.dir === 'c2s' && typeof m.msg['method'] === 'string' ? m.msg['method'] : undefined);

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

  /** One `claude -p` whose only MCP server starts startDelayMs late; the wire as the tap saw it. */
  async function probe(label: string, startDelayMs: number, env: Record<string, string> = {}): Promise<{ messages: WireMessage[]; spawnLagMs: number }> {
    const log = join(sandbox.root, `${label}-wire.jsonl`);
    const config = join(sandbox.root, `${label}-mcp.json`);
    await writeFile(config, JSON.stringify({ mcpServers: { [`slow-${label}`]: { type: 'stdio', command: process.execPath, args: [TAP, log, process.execPath, SLOW, String(startDelayMs)] } } }));
    const run = await runClaude({ ...sandbox, env: { ...sandbox.env, ENABLE_TOOL_SEARCH: 'false', ...env } }, [
      ...STREAM_JSON_ARGS, '--mcp-config', config, '--strict-mcp-config', '--', `hello ${label}`,
    ], HOST_DEADLINE_MS);
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const wire = readWireLog(log);
    return { messages: wireMessages(wire), spawnLagMs: wire.find((e) => e.spawnLagMs !== undefined)?.spawnLagMs ?? 0 };
  }

  /**
   * The methods in the order the host sent them, and how long after the spawn initialize came (null: none).
   * The probe is written at spawn, before the tap reads; so the gap is counted from the tap's spawn.
   */
  const read = ({ messages, spawnLagMs }: { messages: readonly WireMessage[]; spawnLagMs: number }): { methods: string[]; gapMs: number | null } => {
    const sent = messages.filter((m) => method(m) !== undefined);
    const init = sent.find((m) => method(m) === 'initialize');
    assert.equal(method(sent[0]!), 'server/discover', 'the host probed first');
    return { methods: sent.map((m) => method(m)!), gapMs: init === undefined ? null : init.t + spawnLagMs };
  };

  it('a server that answers within the deadline (0.5 s after its start) gets the 2026-07-28 era: no initialize', async (t) => {
    const probed = await probe('in-time', 500);
    const { messages } = probed;
    const { methods, gapMs } = read(probed);
    t.diagnostic(`methods: ${methods.join(', ')}`);
    assert.equal(methods[0], 'server/discover');
    assert.equal(gapMs, null, `no initialize: ${methods.join(', ')}`);
    const list = messages.find((m) => method(m) === 'tools/list');
    assert.equal(at(list?.msg, 'params', '_meta', 'io.modelcontextprotocol/protocolVersion'), '2026-07-28', 'tools/list in the modern era');
  });

  it('a server that answers after it (3 s late) is legacy for the session: initialize 1.67 s after the probe', async (t) => {
    const probed = await probe('late', 3_000);
    const { messages } = probed;
    const { methods, gapMs } = read(probed);
    t.diagnostic(`spawn → initialize: ${gapMs} ms; methods: ${methods.join(', ')}`);
    assert.ok(gapMs !== null, `an initialize followed the unanswered probe: ${methods.join(', ')}`);
    assertNear(gapMs, PROBE_DEADLINE_MS, 'the probe');
    const list = messages.find((m) => method(m) === 'tools/list');
    assert.ok(list, 'tools/list was sent');
    assert.equal(JSON.stringify(list.msg).includes('io.modelcontextprotocol/protocolVersion'), false, 'tools/list in the legacy era');
  });

  it('MCP_TIMEOUT sets it: a third of it (12 s: capped at 3 s; 3 s: 1 s)', async (t) => {
    for (const [timeoutMs, expectedMs] of [[12_000, PROBE_DEADLINE_CAP_MS], [3_000, 1_000]] as const) {
      const { methods, gapMs } = read(await probe(`timeout-${timeoutMs}`, expectedMs + 1_500, { MCP_TIMEOUT: String(timeoutMs) }));
      t.diagnostic(`MCP_TIMEOUT=${timeoutMs}: spawn → initialize: ${gapMs} ms; methods: ${methods.join(', ')}`);
      assert.ok(gapMs !== null, `an initialize followed the unanswered probe: ${methods.join(', ')}`);
      assertNear(gapMs, expectedMs, `MCP_TIMEOUT=${timeoutMs}: the probe`);
    }
  });
});
