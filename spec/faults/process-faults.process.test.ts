/**
 * Process faults through the real tool layer (in-process adapter, real supervisors, fake native CLI, the
 * real process table): kill -9 of the supervisor and of the native process at seeded random points, a
 * native that ignores SIGTERM, a grandchild holding the pipes, a setsid child. After each: nothing of the
 * run's session or group survives, the reported cleanup state is honest, and the adapter still runs work.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ProcessIdentity } from '../../lib/supervisor/protocol.ts';
import { createToolHarness, toolErrorOf, type ToolHarness } from '../helpers/tool-harness.ts';
import { readReadyLines } from '../helpers/proc.ts';
import { createRandom } from './schema-cases.ts';
import { cmdlineOf, descendantsOf, identify, killAll, supervisorsOf, waitFor, waitForNoOrphans } from './proc-helpers.ts';
import { identityOf } from '../../lib/process/proc-stat.ts';
import { pollUntil } from '../helpers/poll.ts';
import { assertProvenOrHonest, BACKENDS, type NamedBackend } from '../helpers/backends.ts';

// A run settles on its supervisor's report, a few ms before that supervisor exits, so a finished run's
// supervisor can still be listed when the next run starts: take only one not listed before the run started.
// (Identities, not start times against /proc/uptime: a container may virtualise uptime but not start times.)
type Known = ReadonlySet<string>;
const key = (s: ProcessIdentity): string => `${s.pid}:${s.start}`;
function knownSupervisors(): Known {
  return new Set(supervisorsOf(process.pid).map(key));
}
function newSupervisor(known: Known): () => ProcessIdentity | undefined {
  return () => supervisorsOf(process.pid).find((s) => !known.has(key(s)));
}

const SEED = 0xdead_0009;
const POINTS = 3;
// About 4.8 s of events: every random point (under 1.5 s after the native appears) falls while it lives, also on a loaded
// machine (at 2.4 s, one run under c8 had exited before its point: kill ESRCH).
const SLOW = { FAKE_CLAUDE_SCENARIO: 'slow', FAKE_CLAUDE_SLOW_EVENTS: '120', FAKE_CLAUDE_DELAY_MS: '40' };

async function startRun(h: ToolHarness): Promise<string> {
  const started = await h.call('claude.run.start', { prompt: 'x', cwd: h.dir });
  assert.equal(started.isError, false, started.text.slice(0, 300));
  return String(started.result?.['run_id']);
}

/** The run's full result once it settled: long-polls (each call blocks until settled or 5 s), 60 s in all. */
async function settledResult(h: ToolHarness, runId: string): Promise<Record<string, unknown>> {
  return pollUntil(
    `run ${runId} settled`,
    async () => {
      const out = await h.call('claude.run.result', { run_id: runId, wait_seconds: 5, detail: 'full' });
      return out.result?.['completed'] === true ? out.result : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 0 },
  );
}

/** The run's native process: the supervisor's child running the fake CLI (not its --version). */
function nativeOf(supervisorPid: number): ProcessIdentity | undefined {
  const stat = descendantsOf(supervisorPid).find((s) => /fake-claude\.mjs/.test(cmdlineOf(s.pid)) && !/--version/.test(cmdlineOf(s.pid)));
  return stat ? identityOf(stat) : undefined;
}

/**
 * The fake native's setsid child announced itself; a run that settles first (it never got that far) fails the
 * wait at once with the run's own error rather than at the deadline with none.
 */
async function setsidReadyOrSettled(h: ToolHarness, runId: string, readyFile: string): Promise<{ pid: number }> {
  return pollUntil(
    'the ready line of the setsid child',
    async () => {
      const line = readReadyLines(readyFile).find((l) => l.ready === 'setsid');
      if (line !== undefined) return line;
      const out = await h.call('claude.run.result', { run_id: runId, wait_seconds: 0, detail: 'full' });
      if (out.result?.['completed'] === true)
        assert.fail(
          `the run settled before its native's setsid child was ready: ${JSON.stringify(out.result['error'])} (state ${String(out.result['state'])})`,
        );
      return undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}

async function assertStillServing(h: ToolHarness, backend: NamedBackend['name'] = 'cgroup'): Promise<void> {
  const out = await h.call('claude.run', { prompt: 'again', cwd: h.dir });
  assertProvenOrHonest(out.result, backend);
  if (out.result?.['cleanup_confirmed'] === true) assert.equal(out.isError, false, out.text.slice(0, 500));
  assert.ok(out.result?.['result'] !== null, 'the run was served');
}

for (const backend of BACKENDS)
  test(`${backend.name}: kill -9 of the supervisor at random points: leftovers ended, ${backend.name === 'cgroup' ? "proven by the run's cgroup once it exists" : 'reported unconfirmed'}, serving goes on`, async (t) => {
    const random = createRandom(SEED);
    const h = await createToolHarness({ env: SLOW, config: { cleanupBackend: backend.option } });
    const victims: (ProcessIdentity | null)[] = [];
    try {
      // At most three: a run whose cleanup cannot be proven keeps one of the four active slots for good.
      for (let i = 0; i < POINTS; i++) {
        const known = knownSupervisors();
        const runId = await startRun(h);
        const supervisor = await waitFor('the prepared supervisor', newSupervisor(known), 30_000);
        // Alternate the phase the kill hits: the supervisor booting or running the version check, then a
        // streaming native (the point counts from the native's appearance).
        const streaming = i % 2 === 1;
        if (streaming) await waitFor('the native process', () => nativeOf(supervisor.pid), 30_000);
        const pointMs = Math.floor(random() * (streaming ? 800 : 1800));
        await delay(pointMs);
        const family = [supervisor, ...descendantsOf(supervisor.pid).map(identityOf)];
        victims.push(...family);
        process.kill(supervisor.pid, 'SIGKILL');
        const result = await settledResult(h, runId);
        assert.equal(result['is_error'], true);
        const proof = (await h.full(runId))['cleanup_proof'];
        if (backend.name === 'cgroup' && streaming) {
          // The native was born in the run's cgroup: the adapter ends it there, and the kernel's word is proof.
          assert.deepEqual([result['cleanup_confirmed'], proof], [true, 'cgroup'], JSON.stringify(result['cleanup_error']));
          assert.equal(toolErrorOf(result['error'])?.code, 'supervisor_failed');
        } else if (result['cleanup_confirmed'] === true) {
          // Killed while booting or checking the version: proven only by a cgroup the supervisor had made.
          assert.equal(proof, 'cgroup');
          assert.equal(backend.name, 'cgroup');
        } else if (toolErrorOf(result['cleanup_error'])?.code !== 'supervisor_failed') {
          // The supervisor had already reported (the kill came after the run's end), honestly unproven.
          assertProvenOrHonest(result, backend.name);
        }
        await waitForNoOrphans(family, [supervisor.pid]);
        t.diagnostic(
          `point ${pointMs} ms${streaming ? ' after the native appeared' : ''}: ${family.length - 1} process(es) of the run, state ${String(result['state'])}, error ${String(toolErrorOf(result['error'])?.code)}`,
        );
      }
      await assertStillServing(h, backend.name);
    } finally {
      killAll(victims);
      await h.close();
    }
  });

test('kill -9 of the native process at random points: an error, cleanup still proven, serving goes on', async (t) => {
  const random = createRandom(SEED + 1);
  const h = await createToolHarness({ env: SLOW });
  const victims: (ProcessIdentity | null)[] = [];
  try {
    for (let i = 0; i < POINTS; i++) {
      const known = knownSupervisors();
      const runId = await startRun(h);
      const supervisor = await waitFor('the prepared supervisor', newSupervisor(known), 30_000);
      const native = await waitFor('the native process', () => nativeOf(supervisor.pid), 30_000);
      victims.push(supervisor, native);
      const pointMs = Math.floor(random() * 1500);
      await delay(pointMs);
      process.kill(native.pid, 'SIGKILL');
      const result = await settledResult(h, runId);
      assert.equal(result['is_error'], true);
      assert.equal(result['signal'], 'SIGKILL');
      assert.equal(result['cleanup_confirmed'], true, JSON.stringify(result['cleanup_error']));
      await waitForNoOrphans([supervisor, native], [supervisor.pid]);
      t.diagnostic(`point ${pointMs} ms: error ${String(toolErrorOf(result['error'])?.code)}`);
    }
    await assertStillServing(h);
  } finally {
    killAll(victims);
    await h.close();
  }
});

for (const backend of BACKENDS)
  test(`${backend.name}: kill -9 of the supervisor while a setsid child lives: the adapter fallback ends it${backend.name === 'cgroup' ? ' and proves it' : ''}`, async () => {
    const readyDir = mkdtempSync(join(tmpdir(), 'crm-ready-'));
    const readyFile = join(readyDir, 'ready.jsonl');
    const h = await createToolHarness({
      env: { FAKE_CLAUDE_SCENARIO: 'setsid_child', FAKE_CLAUDE_HOLD_MS: 'hang', FAKE_CLAUDE_READY_FILE: readyFile },
      config: { cleanupBackend: backend.option },
    });
    const victims: (ProcessIdentity | null)[] = [];
    try {
      const known = knownSupervisors();
      const runId = await startRun(h);
      const supervisor = await waitFor('the prepared supervisor', newSupervisor(known), 30_000);
      const line = await setsidReadyOrSettled(h, runId, readyFile);
      const escapee = identify(line.pid);
      assert.ok(escapee);
      const native = nativeOf(supervisor.pid) ?? null;
      victims.push(supervisor, escapee, native);
      process.kill(supervisor.pid, 'SIGKILL');
      const result = await settledResult(h, runId);
      assert.equal(result['cleanup_confirmed'], backend.name === 'cgroup');
      // Out of the supervisor's session, but still the native's child when the fallback looked.
      await waitForNoOrphans(
        victims.filter((v): v is ProcessIdentity => v !== null),
        [supervisor.pid],
        2000,
      );
    } finally {
      killAll(victims);
      await h.close();
      rmSync(readyDir, { recursive: true, force: true });
    }
  });

test('a failed version check lets the supervisor prepared beside it go before the run settles', async () => {
  const h = await createToolHarness({ env: { FAKE_CLAUDE_VERSION: '9.9.9' } });
  try {
    for (let i = 0; i < 3; i++) {
      const out = await h.call('claude.run', { prompt: 'x', cwd: h.dir });
      assert.equal(out.error?.code, 'native_version_mismatch');
      assert.equal(out.result?.['cleanup_confirmed'], true);
      assert.deepEqual(supervisorsOf(process.pid), [], 'no supervisor outlives the outcome');
    }
  } finally {
    await h.close();
  }
});

const LADDER_CASES: readonly { name: string; env: Record<string, string>; ready: string; cancel: boolean }[] = [
  {
    name: 'a native that ignores SIGINT and SIGTERM is SIGKILLed on cancel',
    // It ignores the in-band interrupt too, so the ladder's SIGKILL is what ends it.
    env: { FAKE_CLAUDE_SCENARIO: 'ignore_sigterm', FAKE_CLAUDE_IGNORE_INTERRUPT: '1' },
    ready: 'handlers',
    cancel: true,
  },
  {
    name: 'a grandchild holding the native pipes is ended after a normal exit',
    env: { FAKE_CLAUDE_SCENARIO: 'grandchild_holds_stdout' },
    ready: 'grandchild',
    cancel: false,
  },
  {
    name: 'a setsid child (own session) is tracked and ended on cancel',
    env: { FAKE_CLAUDE_SCENARIO: 'setsid_child', FAKE_CLAUDE_HOLD_MS: 'hang' },
    ready: 'setsid',
    cancel: true,
  },
];

for (const c of LADDER_CASES) {
  test(c.name, async () => {
    const readyDir = mkdtempSync(join(tmpdir(), 'crm-ready-'));
    const readyFile = join(readyDir, 'ready.jsonl');
    const run = await createToolHarness({ env: { ...c.env, FAKE_CLAUDE_READY_FILE: readyFile } });
    const victims: (ProcessIdentity | null)[] = [];
    try {
      const known = knownSupervisors();
      const runId = await startRun(run);
      const supervisor = await waitFor('the prepared supervisor', newSupervisor(known), 30_000);
      const line = await waitFor(`ready ${c.ready}`, () => readReadyLines(readyFile).find((l) => l.ready === c.ready), 30_000);
      const extra = identify(line.pid);
      const native = nativeOf(supervisor.pid) ?? null;
      victims.push(supervisor, extra, native);
      if (c.cancel) await run.call('claude.run.cancel', { run_id: runId });
      const result = await settledResult(run, runId);
      assert.equal(result['cleanup_confirmed'], true, JSON.stringify(result['cleanup_error']));
      assert.equal(result['cancelled'], c.cancel);
      await waitForNoOrphans(
        victims.filter((v): v is ProcessIdentity => v !== null),
        [supervisor.pid],
        2000,
      );
    } finally {
      killAll(victims);
      await run.close();
      rmSync(readyDir, { recursive: true, force: true });
    }
  });
}
