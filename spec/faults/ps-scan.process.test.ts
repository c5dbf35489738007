/**
 * The portable ps_scan backend on the real process table, through the real tool layer (in-process adapter, real
 * supervisors, fake native CLI): a clean run is confirmed on two `ps` tables; an orphan the run cannot attribute
 * is reported and left alive; and a `ps` that fails in any way (missing, failing, killed, hung, garbage, cut
 * short) leaves the run unconfirmed with an error naming ps while the server keeps serving.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createToolHarness, toolErrorOf, type ToolCallResult, type ToolHarness } from '../helpers/tool-harness.ts';
import { readReadyLines, waitFor } from '../helpers/proc.ts';
import { aliveNaming, killPids } from './escape-helpers.ts';
import { at } from '../helpers/typed-results.ts';

const FAKE_PS = fileURLToPath(new URL('../../fixtures/fake-ps/', import.meta.url));
const REAL_PATH = process.env['PATH'] ?? '/usr/bin:/bin';
const PS_SCAN = { cleanupBackend: 'ps_scan' } as const;

/** The supervisors this server starts see this process's PATH: `ps` is looked up there. */
async function withPath<T>(path: string, use: () => Promise<T>): Promise<T> {
  process.env['PATH'] = path;
  try {
    return await use();
  } finally {
    process.env['PATH'] = REAL_PATH;
  }
}

async function withHarness<T>(use: (h: ToolHarness) => Promise<T>, env: Record<string, string> = {}): Promise<T> {
  const h = await createToolHarness({ env, config: PS_SCAN });
  try {
    return await use(h);
  } finally {
    await h.close();
  }
}

/**
 * A run served and confirmed, or left unconfirmed (and so an error) only by someone's orphan started meanwhile:
 * other jobs on this shared machine daemonize all the time, and ps_scan cannot tell their orphans from the run's.
 */
function assertServedAndProven(out: ToolCallResult): void {
  if (out.result?.['cleanup_confirmed'] === true) {
    assert.equal(out.isError, false, out.text.slice(0, 400));
    return;
  }
  assert.equal(toolErrorOf(out.result?.['error'])?.code, 'cleanup_unconfirmed', out.text.slice(0, 400));
  assert.match(JSON.stringify(out.result?.['cleanup_error']), /unattributed orphan/);
}

test('ps_scan: a run that leaves nothing is confirmed on ps tables, and says so', async () => {
  await withHarness(async (h) => {
    const out = await h.call('claude.run', { prompt: 'x', cwd: h.dir });
    assertServedAndProven(out);
    assert.equal((await h.full(out.result?.['run_id']))['cleanup_proof'], 'ps_scan');
    const caps = await h.request('resources/read', { uri: 'claude-run://capabilities' });
    const text = at(caps, 'result', 'contents', 0, 'text');
    assert.equal(at(JSON.parse(String(text)), 'cleanup', 'backend'), 'ps_scan');
  });
});

test('ps_scan: an orphan started during the run by someone else is reported by pid, never signalled, and the run is not confirmed', async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'crm-ps-orphan-'));
  const ready = join(scratch, 'ready.jsonl');
  try {
    await withHarness(
      async (h) => {
        const started = await h.call('claude.run.start', { prompt: 'x', cwd: h.dir });
        const runId = String(started.result?.['run_id']);
        // A double fork of this spec's own: the orphan's parent exits at once, so init adopts it (parent pid 1).
        const daemon = `require('node:fs').appendFileSync(${JSON.stringify(ready)}, JSON.stringify({ ready: 'orphan', pid: process.pid }) + '\\n'); setInterval(() => {}, 1000); // ${ready}`;
        const forker = `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(daemon)}], { detached: true, stdio: 'ignore' }).unref()`;
        spawn(process.execPath, ['-e', forker, ready], { stdio: 'ignore' });
        await waitFor('the orphan announced itself', () => readReadyLines(ready).some((l) => l.ready === 'orphan'), 20_000);
        const orphan = readReadyLines(ready).find((l) => l.ready === 'orphan')!.pid;
        const { result } = await h.settled(runId);
        assert.equal(result['cleanup_confirmed'], false);
        assert.match(JSON.stringify(result['cleanup_error']), new RegExp(`unattributed orphan.*\\b${orphan} \\(`));
        assert.deepEqual(aliveNaming(ready), [orphan], 'the orphan was left alive');
        // A later read re-checks the survivors: a ps identity is never shown gone through /proc, so it stays unconfirmed.
        assert.equal((await h.full(runId))['cleanup_confirmed'], false);
      },
      { FAKE_CLAUDE_SCENARIO: 'slow', FAKE_CLAUDE_SLOW_EVENTS: '30', FAKE_CLAUDE_DELAY_MS: '100' },
    );
  } finally {
    killPids(aliveNaming(ready));
    rmSync(scratch, { recursive: true, force: true });
  }
});

/** Each misbehaving `ps` first on the PATH (everything else of it stays: the shims are node scripts); none at all for missing. */
const MODES: readonly { readonly mode: string; readonly path: string; readonly code: RegExp }[] = [
  { mode: 'missing', path: join(FAKE_PS, 'no-such-directory'), code: /ps_not_found/ },
  ...(['fail', 'signal', 'hang', 'garbage', 'cut'] as const).map((mode) => ({
    mode,
    path: `${join(FAKE_PS, mode)}:${REAL_PATH}`,
    code: { fail: /ps_exit_nonzero/, signal: /ps_killed/, hang: /ps_timeout/, garbage: /ps_output_invalid/, cut: /ps_output_invalid/ }[
      mode
    ],
  })),
];

for (const { mode, path, code } of MODES) {
  test(`ps_scan: a ps that is ${mode} leaves the run unconfirmed with an error naming ps; the server keeps serving`, async () => {
    await withHarness(async (h) => {
      // The supervisor is node started by its absolute path: only where `ps` is found differs.
      const out = await withPath(path, () => h.call('claude.run', { prompt: 'x', cwd: h.dir }));
      assert.equal(out.result?.['cleanup_confirmed'], false);
      const error = toolErrorOf(out.result?.['cleanup_error']);
      assert.equal(error?.code, 'cleanup_unconfirmed');
      assert.match(error?.message ?? '', /^ps: /);
      assert.match(error?.message ?? '', code);
      // The same server, ps answering again: the next run is served and proven as usual.
      assertServedAndProven(await h.call('claude.run', { prompt: 'y', cwd: h.dir }));
    });
  });
}
