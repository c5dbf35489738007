/**
 * Concurrent floods of numbered lines through real supervisors: every line of every run arrives exactly once
 * and in order, whoever resumes the stream (Node resumes a child's pipes when it exits).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFake } from '../harness.ts';

const FLOODS = 4;
const LINES = 25_000;

function checkSequence(text: string): { numbered: number; broken: string | null } {
  let expected = 0;
  let numbered = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let event: { type?: string; event?: { delta?: { text?: string } } };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      return { numbered, broken: `unparsable line after n${expected - 1}: ${line.slice(0, 80)}` };
    }
    const text = event.event?.delta?.text;
    if (event.type !== 'stream_event' || text === undefined) continue;
    const match = /^n(\d+) p{1000}$/.exec(text);
    if (match === null || Number(match[1]) !== expected) return { numbered, broken: `expected n${expected}, got ${text.slice(0, 40)}` };
    expected++;
    numbered++;
  }
  return { numbered, broken: null };
}

test(`${FLOODS} concurrent floods of ${LINES} numbered lines: every line once, in order, in every run`, async () => {
  const runs = Array.from({ length: FLOODS }, () => startFake('numbered_flood', { env: { FAKE_CLAUDE_FLOOD_LINES: String(LINES) } }));
  // Keep the event loop busy meanwhile, as a server answering polls would.
  let spinning = true;
  const spin = (): void => {
    if (spinning) setImmediate(spin);
  };
  spin();
  try {
    const outcomes = await Promise.all(runs.map((r) => r.run.done));
    for (const [i, run] of runs.entries()) {
      assert.equal(outcomes[i]?.cleanup?.confirmed, true);
      const { numbered, broken } = checkSequence(run.stdout().toString('utf8'));
      assert.equal(broken, null, `run ${i}`);
      assert.equal(numbered, LINES, `run ${i}`);
      assert.match(run.stdout().toString('utf8'), new RegExp(`"result":"lines ${LINES}"`));
    }
  } finally {
    spinning = false;
    for (const run of runs) run.dispose();
  }
});
