// The pinned binary's own control protocol, driven directly (no server) against the loopback fake: what
// cli-tree.json stdin_channel declares, and what lib/native/control.ts reads and writes, on one live process.
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { lastToolResult, startFakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import type { FakeAnthropic, Scenario } from '../../fixtures/fake-anthropic/server.ts';
import { allowLine, denyLine, errorResponseLine, interruptLine, parseControlLine, userMessageLine } from '../../lib/native/control.ts';
import type { CanUseToolRequest, ControlLine } from '../../lib/native/control.ts';
import { matchesControlShape } from '../../lib/native/control-shape.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import { createNativeSandbox, pollUntilGone } from '../helpers/native-env.ts';
import type { NativeSandbox } from '../helpers/native-env.ts';
import { pollUntil } from '../helpers/poll.ts';
import { lookup, objs } from '../helpers/typed-results.ts';
import { STREAM_JSON_ARGS, startClaude } from '../e2e/direct-claude.ts';
import type { StartedClaude } from '../e2e/direct-claude.ts';

/** A fake turn takes about 1 s; this only bounds a hung binary. */
const EVENT_WAIT_MS = 30_000;
/** A claude that exited must be gone already; this only absorbs /proc lag. */
const LEAK_POLL_MS = 2_000;

const channel = CLI_TREE.stdin_channel;
const ARGS = [
  ...STREAM_JSON_ARGS,
  ...CLI_TREE.input['stream-json'].args,
  ...channel.permission_prompt_tool,
  '--permission-mode',
  'default',
];

/** Asks for Bash `touch <file>` in each turn (askEachTurn: the history of an earlier turn's tool_result does not end it). */
const touch = (file: string): Scenario => ({
  kind: 'tool_use',
  tool: 'Bash',
  input: { command: `touch ${file}`, description: 'Create a marker file' },
  askEachTurn: true,
});

/** The index-th event (from 0) that `pick` accepts, once the native wrote it. */
function nth<T>(claude: StartedClaude, what: string, index: number, pick: (e: Record<string, unknown>) => T | undefined): Promise<T> {
  return pollUntil(
    `${what} #${index + 1}`,
    () => {
      const found = claude.events.map(pick).filter((x): x is T => x !== undefined);
      return found[index];
    },
    { timeoutMs: EVENT_WAIT_MS },
  );
}
const control = (e: Record<string, unknown>): ControlLine | undefined => parseControlLine(e as JsonObject) ?? undefined;
const result = (e: Record<string, unknown>): Record<string, unknown> | undefined => (e['type'] === 'result' ? e : undefined);

async function canUseTool(claude: StartedClaude, index: number): Promise<CanUseToolRequest> {
  const raw = await nth(claude, 'a can_use_tool control_request', index, (e) => (control(e)?.kind === 'can_use_tool' ? e : undefined));
  assert.equal(matchesControlShape(raw, channel.native_writes.can_use_tool, false), true, JSON.stringify(raw));
  const q = control(raw);
  assert.ok(q?.kind === 'can_use_tool');
  return q;
}

async function withNative(
  t: TestContext,
  body: (fake: FakeAnthropic, sandbox: NativeSandbox, claude: StartedClaude) => Promise<void>,
): Promise<void> {
  const fake = await startFakeAnthropic({ scenario: { kind: 'text' } });
  const sandbox = await createNativeSandbox({ baseUrl: fake.url });
  try {
    const claude = startClaude(sandbox, ARGS, 120_000, 'pipe');
    try {
      await body(fake, sandbox, claude);
    } finally {
      claude.input?.end();
      await claude.done;
    }
    const left = await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS);
    assert.deepEqual(
      left.map((p) => `${p.pid} ${p.cmdline.join(' ')}`),
      [],
      'processes left behind',
    );
  } finally {
    await fake.close();
    await sandbox.cleanup();
    t.diagnostic(`sandbox ${sandbox.root} removed`);
  }
}

test('one native process: allow, deny, error, interrupt, a further turn, stdin EOF', async (t) => {
  await withNative(t, async (fake, sandbox, claude) => {
    const input = claude.input;
    assert.ok(input);
    const marker = (n: number): string => join(sandbox.cwd, `marker-${n}.txt`);

    // Turn 1: the permission prompt arrives on stdout; an allow with the native's own input runs the tool.
    fake.setScenario(touch('marker-1.txt'));
    input.write(userMessageLine('make marker one'));
    const first = await canUseTool(claude, 0);
    assert.equal(first.toolName, 'Bash');
    assert.deepEqual(first.input, { command: 'touch marker-1.txt', description: 'Create a marker file' });
    assert.match(first.toolUseId, /^toolu_/);
    assert.equal(existsSync(marker(1)), false, 'nothing runs before the answer');
    const allow = allowLine(first);
    assert.equal(matchesControlShape(JSON.parse(allow), channel.native_reads.allow, true), true);
    input.write(allow);
    const r1 = await nth(claude, 'a result', 0, result);
    assert.equal(r1['subtype'], 'success');
    assert.deepEqual(r1['permission_denials'], []);
    assert.equal(existsSync(marker(1)), true, 'the allowed tool ran');
    const sessionId = r1['session_id'];
    assert.equal(typeof sessionId, 'string');

    // Turn 2, same process: a deny; the model reads the message and the result lists the denial.
    fake.setScenario(touch('marker-2.txt'));
    input.write(userMessageLine('make marker two'));
    const second = await canUseTool(claude, 1);
    assert.notEqual(second.requestId, first.requestId);
    input.write(denyLine(second.requestId, 'the person said no'));
    const r2 = await nth(claude, 'a result', 1, result);
    assert.equal(r2['session_id'], sessionId, 'the same session');
    assert.equal(existsSync(marker(2)), false, 'the denied tool did not run');
    const denials = objs(r2['permission_denials'], 'permission_denials');
    assert.deepEqual(
      denials.map((d) => [d['tool_name'], lookup(d, 'tool_input', 'command')]),
      [['Bash', 'touch marker-2.txt']],
    );
    const fed = lastToolResult(fake.requests.at(-1)?.body);
    assert.deepEqual(fed, { isError: true, text: 'the person said no' }, 'the model read the deny message');

    // Turn 3: an error response is a denial too.
    fake.setScenario(touch('marker-3.txt'));
    input.write(userMessageLine('make marker three'));
    const third = await canUseTool(claude, 2);
    input.write(errorResponseLine(third.requestId, 'refused by the test'));
    const r3 = await nth(claude, 'a result', 2, result);
    assert.equal(existsSync(marker(3)), false, 'the refused tool did not run');
    assert.equal(objs(r3['permission_denials'], 'permission_denials').length, 1);
    assert.match(lastToolResult(fake.requests.at(-1)?.body)?.text ?? '', /refused by the test/);

    // Turn 4: interrupt a slow reply; acknowledged with our id, the turn ends error_during_execution, the process lives.
    fake.setScenario({ kind: 'text', text: 'slow '.repeat(200), chunkChars: 5, deltaDelayMs: 100 });
    input.write(userMessageLine('talk slowly'));
    await nth(claude, 'a text delta of turn 4', 0, (e) =>
      result(e) === undefined && lookup(e, 'event', 'delta', 'text') === 'slow ' ? e : undefined,
    );
    const interruptedAt = performance.now();
    input.write(interruptLine('crm-int-1'));
    const ack = await nth(claude, 'the interrupt acknowledgement', 0, (e) => (control(e)?.kind === 'response' ? e : undefined));
    assert.equal(matchesControlShape(ack, channel.native_writes.interrupt_ack, false), true, JSON.stringify(ack));
    assert.deepEqual(control(ack), { kind: 'response', outcome: 'success', requestId: 'crm-int-1' });
    const ackMs = performance.now() - interruptedAt;
    const r4 = await nth(claude, 'a result', 3, result);
    const resultMs = performance.now() - interruptedAt;
    const slowDeltas = claude.events.filter((e) => lookup(e, 'event', 'delta', 'text') === 'slow ').length;
    t.diagnostic(
      `interrupt: ack after ${Math.round(ackMs)} ms, result after ${Math.round(resultMs)} ms, ${slowDeltas} of 200 deltas streamed`,
    );
    assert.ok(slowDeltas < 200, 'the interrupt cut the reply short');
    assert.equal(r4['subtype'], 'error_during_execution');
    assert.equal(r4['is_error'], true);
    assert.equal(r4['session_id'], sessionId);
    assert.deepEqual(
      (await sandbox.processes()).filter((p) => p.isBinary).map((p) => p.pid),
      [claude.pid],
      'the process stays alive after the interrupted turn',
    );

    // Turn 5: a further user line is a normal turn in the same process and session.
    fake.setScenario({ kind: 'text', text: 'after the interrupt' });
    input.write(userMessageLine('and now?'));
    const r5 = await nth(claude, 'a result', 4, result);
    assert.equal(r5['subtype'], 'success');
    assert.equal(r5['result'], 'after the interrupt');
    assert.equal(r5['session_id'], sessionId);
    const inits = claude.events.filter((e) => e['type'] === 'system' && e['subtype'] === 'init');
    assert.ok(inits.length >= 1 && inits.every((e) => e['session_id'] === sessionId), 'every init names the one session');

    // stdin EOF: the process exits 0.
    input.end();
    const run = await claude.done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.events.filter((e) => e['type'] === 'result').length, 5, 'one result per turn');
    t.diagnostic(`5 turns, 1 process (pid ${claude.pid}), session ${String(sessionId)}, exit ${Math.round(run.exitMs)} ms after spawn`);
  });
});
