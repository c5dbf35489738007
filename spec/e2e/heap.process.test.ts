/**
 * The stdio server's heap setting, proven on the Node that runs the specs: a fresh process that keeps
 * data surviving scavenges (allocated across event-loop turns, as ingestion is) grows its young generation
 * to V8's maximum, and the same process with holdYoungGeneration() called after startup (as the server does
 * at its first tools/list) stops it at MAX_YOUNG_GENERATION_BYTES.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { MAX_YOUNG_GENERATION_BYTES } from '../../lib/cli/heap.ts';

const HEAP = fileURLToPath(new URL('../../lib/cli/heap.ts', import.meta.url));

/** Runs a child that retains ~48 MiB in small strings (each survives scavenges) and reports its young generation. */
function youngGeneration(options: { hold: boolean; execArgv?: readonly string[] }): {
  start: number;
  end: number;
  max: number;
  held: boolean | null;
} {
  const script = `
    import { holdYoungGeneration } from ${JSON.stringify(HEAP)};
    const v8 = await import('node:v8');
    const size = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    const start = size();
    const held = ${options.hold} ? holdYoungGeneration(process.execArgv, process.env) : null;
    const kept = [];
    let max = start;
    for (let turn = 0; turn < 48; turn += 1) {
      for (let i = 0; i < 1024; i += 1) kept.push(String(turn * 1024 + i).padEnd(1000, 'x'));
      max = Math.max(max, size());
      await new Promise((resolve) => setImmediate(resolve));
    }
    process.stdout.write(JSON.stringify({ start, end: size(), max: Math.max(max, size()), held, kept: kept.length }));
  `;
  const child = spawnSync(process.execPath, [...(options.execArgv ?? []), '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '' },
  });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout) as { start: number; end: number; max: number; held: boolean | null };
}

test('without the setting the young generation grows past the cap while data survives; with it, set after startup, it stops at the cap', () => {
  const grown = youngGeneration({ hold: false });
  assert.ok(grown.start <= MAX_YOUNG_GENERATION_BYTES, `starts at ${grown.start} bytes`);
  assert.ok(grown.max >= 4 * MAX_YOUNG_GENERATION_BYTES, `young generation ${grown.start} → ${grown.max} bytes`);
  const held = youngGeneration({ hold: true });
  assert.equal(held.held, true);
  assert.ok(held.max <= MAX_YOUNG_GENERATION_BYTES, `young generation ${held.start} → ${held.max} bytes: not past the cap`);
});

test('a launcher that passed its own semi-space flags keeps them', () => {
  const chosen = youngGeneration({ hold: true, execArgv: ['--max-semi-space-size=4'] });
  assert.equal(chosen.held, false);
  assert.ok(chosen.max > MAX_YOUNG_GENERATION_BYTES, `young generation ${chosen.start} → ${chosen.max} bytes`);
});

test("a launcher that froze V8's flags keeps its process alive: the setting stays off (changing a frozen flag is fatal)", () => {
  const frozen = youngGeneration({ hold: true, execArgv: ['--freeze-flags-after-init'] });
  assert.equal(frozen.held, false);
});

test('the tool providers call onFirstUse once, at the first tools/list or tools/call, never at the handshake; the server passes the heap setting there', async () => {
  const { createToolHarness } = await import('../helpers/tool-harness.ts');
  for (const first of ['list', 'call'] as const) {
    let calls = 0;
    const harness = await createToolHarness({
      config: {
        onFirstUse: () => {
          calls += 1;
        },
      },
    });
    try {
      assert.equal(calls, 0, 'not during initialize');
      if (first === 'list') await harness.request('tools/list');
      else await harness.call('claude.run.list', {});
      assert.equal(calls, 1);
      await harness.request('tools/list');
      await harness.call('claude.run.list', {});
      assert.equal(calls, 1, 'once');
    } finally {
      await harness.close();
    }
  }
  const { readFileSync } = await import('node:fs');
  assert.match(
    readFileSync(fileURLToPath(new URL('../../lib/cli/serve.ts', import.meta.url)), 'utf8'),
    /onFirstUse: \(\) => holdYoungGeneration\(process\.execArgv, process\.env\)/,
  );
});
