// One conversation never has two concurrent native writers: runs that resume or continue the same
// conversation queue (state waiting_for_session) while other conversations run in parallel. The fake
// stamps each process's start ('session' line) and end ('exit' line), which proves (non-)overlap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { at, objs } from '../helpers/typed-results.ts';
import { createSessionHarness, waitForState, waitUntil, type SessionHarness } from './helpers.ts';

const SLOW = { FAKE_CLAUDE_SCENARIO: 'slow', FAKE_CLAUDE_SLOW_EVENTS: '8', FAKE_CLAUDE_DELAY_MS: '120' };
const S1 = '1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d';
const S2 = '2b3c4d5e-6f7a-4b2c-9d3e-4f5a6b7c8d9e';

/**
 * The slow fake, held before its last events while the gate file is absent: a run started with the gate
 * closed cannot end until the spec opens it, so two runs seen streaming then are certain to overlap.
 */
function gated(): { readonly env: Record<string, string>; open(): void; close(): void; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'crm-gate-'));
  const file = join(dir, 'open');
  return {
    env: { ...SLOW, FAKE_CLAUDE_GATE_FILE: file },
    open: () => writeFileSync(file, ''),
    close: () => rmSync(file, { force: true }),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }): boolean => a.start < b.end && b.start < a.end;

async function statesNow(h: SessionHarness): Promise<Record<string, string>> {
  const list = await h.call('claude.run.list', {});
  return Object.fromEntries(objs(at(list.result, 'runs'), 'runs').map((r) => [String(r['run_id']), String(r['state'])]));
}

test('two resumes of one session are serialized; another session runs in parallel', async () => {
  const gate = gated();
  const h = await createSessionHarness(gate.env);
  try {
    const cwd = h.subdir('p');
    gate.open(); // the seeds need not wait
    const seeds = [await h.start({ prompt: 'seed1', cwd, session_id: S1 }), await h.start({ prompt: 'seed2', cwd, session_id: S2 })];
    for (const id of seeds) assert.equal((await h.settled(id)).isError, false);

    gate.close();
    const first = await h.start({ prompt: 'R1a', cwd, resume_session_id: S1 });
    const second = await h.start({ prompt: 'R1b', cwd, resume_session_id: S1 });
    const other = await h.start({ prompt: 'R2', cwd, resume_session_id: S2 });
    await waitUntil(
      'R1a and R2 streaming',
      () => h.lines().filter((l) => l.ready === 'session' && (l.prompt === 'R1a' || l.prompt === 'R2')).length === 2,
    );
    const states = await statesNow(h);
    assert.equal(states[second], 'waiting_for_session', 'the queued run is visible as a state');
    assert.equal(states[first], 'running');
    assert.equal(states[other], 'running', 'a different conversation is not held up');
    gate.open();

    const results = [await h.settled(first), await h.settled(second), await h.settled(other)];
    for (const out of results) assert.equal(out.isError, false, out.text.slice(0, 300));
    assert.deepEqual(
      results.map((o) => [o.result?.['session_id'], o.result?.['resumed']]),
      [
        [S1, true],
        [S1, true],
        [S2, true],
      ],
    );
    const [a, b, c] = [h.span('R1a'), h.span('R1b'), h.span('R2')];
    assert.ok(a.end <= b.start, `R1b started (${b.start}) only after R1a ended (${a.end})`);
    assert.ok(overlaps(a, c), 'R2 ran while R1a ran');
  } finally {
    await h.close();
    gate.dispose();
  }
});

test('continue is keyed by directory and by its newest conversation', async () => {
  const gate = gated();
  const h = await createSessionHarness(gate.env);
  try {
    const x = h.subdir('x');
    const y = h.subdir('y');
    gate.open(); // the seeds need not wait
    for (const id of [
      await h.start({ prompt: 'seedX', cwd: x, session_id: S1 }),
      await h.start({ prompt: 'seedY', cwd: y, session_id: S2 }),
    ]) {
      assert.equal((await h.settled(id)).isError, false);
    }
    gate.close();
    const cx1 = await h.start({ prompt: 'CX1', cwd: x, continue_previous: true });
    const cx2 = await h.start({ prompt: 'CX2', cwd: x, continue_previous: true });
    const rx = await h.start({ prompt: 'RX', cwd: y, resume_session_id: S1 }); // the newest conversation of x, from elsewhere
    const cy = await h.start({ prompt: 'CY', cwd: y, continue_previous: true });
    await waitForState(h, cx2, 'waiting_for_session');
    await waitForState(h, rx, 'waiting_for_session');
    await waitUntil(
      'CX1 and CY streaming',
      () => h.lines().filter((l) => l.ready === 'session' && (l.prompt === 'CX1' || l.prompt === 'CY')).length === 2,
    );
    gate.open();
    const ids = [cx1, cx2, rx, cy];
    const results = [];
    for (const id of ids) results.push(await h.settled(id));
    for (const out of results) assert.equal(out.isError, false, out.text.slice(0, 300));
    assert.deepEqual(
      results.map((o) => o.result?.['session_id']),
      [S1, S1, S1, S2],
    );
    assert.deepEqual(
      results.map((o) => o.result?.['resumed']),
      [true, true, true, true],
    );
    const spans = ['CX1', 'CX2', 'RX'].map((p) => h.span(p)).sort((p, q) => p.start - q.start);
    for (let i = 1; i < spans.length; i++) assert.ok(spans[i - 1]!.end <= spans[i]!.start, 'the writers of S1 never overlap');
    assert.ok(overlaps(h.span('CX1'), h.span('CY')), 'another directory continues in parallel');
  } finally {
    await h.close();
    gate.dispose();
  }
});

test('cancelling a run that waits for its conversation ends it without spawning anything', async () => {
  const h = await createSessionHarness(SLOW);
  try {
    const cwd = h.subdir('c');
    {
      const seed = await h.settled(await h.start({ prompt: 'seed', cwd, session_id: S1 }));
      assert.equal(seed.isError, false, seed.text.slice(0, 600));
    }
    const holder = await h.start({ prompt: 'holder', cwd, resume_session_id: S1 });
    const waiter = await h.start({ prompt: 'waiter', cwd, resume_session_id: S1 });
    await waitForState(h, waiter, 'waiting_for_session');
    const cancel = await h.call('claude.run.cancel', { run_id: waiter });
    assert.equal(cancel.result?.['cancel_requested'], true);
    const out = await h.settled(waiter);
    assert.equal(out.error?.code, 'cancelled');
    assert.equal(out.result?.['cleanup_confirmed'], true);
    assert.equal((await h.settled(holder)).isError, false);
    assert.equal(
      h.lines().some((l) => l.prompt === 'waiter'),
      false,
      'the waiting run never started a process',
    );
  } finally {
    await h.close();
  }
});

test('a continue that waited for its directory also holds the conversation created meanwhile: a resume of it waits', async () => {
  const h = await createSessionHarness(SLOW);
  try {
    const cwd = h.subdir('fresh');
    const first = await h.start({ prompt: 'C1', cwd, continue_previous: true }); // no conversation yet: starts one
    const second = await h.start({ prompt: 'C2', cwd, continue_previous: true }); // queued on the directory
    const out1 = await h.settled(first);
    assert.equal(out1.isError, false, out1.text.slice(0, 300));
    const created = String(out1.result?.['session_id']);
    await waitUntil('C2 streaming', () => h.lines().some((l) => l.ready === 'session' && l.prompt === 'C2'));
    const resume = await h.start({ prompt: 'R', cwd, resume_session_id: created });
    const [out2, outR] = [await h.settled(second), await h.settled(resume)];
    assert.equal(out2.isError, false, out2.text.slice(0, 300));
    assert.equal(outR.isError, false, outR.text.slice(0, 300));
    assert.deepEqual([out2.result?.['session_id'], out2.result?.['resumed']], [created, true]);
    const [c2, r] = [h.span('C2'), h.span('R')];
    assert.ok(c2.end <= r.start, `the resume started (${r.start}) only after the continue ended (${c2.end})`);
  } finally {
    await h.close();
  }
});
