/**
 * The escape cases, defined once and run under each cleanup backend by escapes-*.test.ts and
 * escape-campaign-*.test.ts. The ways real tools leave processes behind, against the real process table: a Bash-tool shell (its own
 * session) that backgrounds a job with `cmd &`, `nohup cmd &` or `setsid cmd &` and exits; a new process
 * group inside the supervisor's session whose parent exits at once; a double-forked daemon; a native that
 * forks and exits before the first tracking scan. For each: the run reports cleanup confirmed only when
 * nothing whose command line names this test's private ready file is alive any more.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readProcStat, readReadyLines, waitFor, waitForReady } from '../helpers/proc.ts';
import { aliveNaming, watchNaming, withTracedHarness } from './escape-helpers.ts';
import { createRandom } from './schema-cases.ts';
import { at } from '../helpers/typed-results.ts';
import { setTimeout as delay } from 'node:timers/promises';
import { assertProvenOrHonest, type NamedBackend } from '../helpers/backends.ts';

const TRIALS = 2;
/** How often a trial looks for its own processes while it runs (to know them once they are gone). */
const WATCH_MS = 20;

export const ESCAPE_CASES: readonly {
  readonly name: string;
  readonly escape: string;
  readonly exitFirst?: boolean;
  readonly trials?: number;
  readonly only?: NamedBackend['name'];
}[] = [
  { name: 'a Bash-tool job `cmd &` that outlives its shell', escape: 'bash_bg' },
  { name: 'a Bash-tool job `nohup cmd &`', escape: 'bash_nohup' },
  { name: 'a Bash-tool job `setsid cmd &`', escape: 'bash_setsid' },
  { name: 'a new process group in the supervisor session whose parent exits at once', escape: 'new_group' },
  { name: 'a double-forked daemon', escape: 'double_fork' },
  { name: 'a setsid child of a native that exits before the first scan', escape: 'bash_setsid', exitFirst: true },
  { name: 'a daemon of a native that exits before the first scan', escape: 'double_fork', exitFirst: true },
  { name: 'all of them at once', escape: 'bash_bg,bash_nohup,bash_setsid,new_group,double_fork' },
  { name: 'a new session with a scrubbed environment (no marker) whose parent lingers past a few scans', escape: 'scrubbed_lingering' },
  { name: 'a group member that answers SIGTERM with `setsid cmd &` and exits while cleanup scans', escape: 'term_trap', trials: 10 },
  // Beyond /proc tracking (docs/supervisor.md, its limits), inside the cgroup's boundary.
  { name: 'a new session with a scrubbed environment whose parent is gone before any scan', escape: 'scrubbed', only: 'cgroup' },
  { name: 'a daemon that makes itself non-dumpable (ssh-agent)', escape: 'ssh_agent', only: 'cgroup' },
];

/**
 * What a run's end must show. Under cgroup and process_scan: nothing of the trial alive, and cleanup proven (or
 * honestly unproven for the scan-miss reason). Under ps_scan a process that got away between two tables is an
 * unattributed orphan: never confirmed while one of the trial's processes lives, and every one still alive is
 * named by the run's cleanup error as an unattributed orphan (left alive for the spec's own end to kill), or was
 * started after the run's last table by one the error names (a daemon's second fork: `seen` holds every pid of
 * the trial the spec saw); every process the run could attribute is ended.
 */
export function assertEndedOrReported(
  result: Record<string, unknown> | null | undefined,
  ready: string,
  backend: NamedBackend['name'],
  seen: ReadonlySet<number> = new Set(),
): void {
  const alive = aliveNaming(ready);
  const confirmed = result?.['cleanup_confirmed'];
  if (backend !== 'ps_scan') {
    assert.deepEqual(alive, [], `alive after the run reported (confirmed=${JSON.stringify(confirmed)})`);
    assertProvenOrHonest(result, backend);
    return;
  }
  const error = JSON.stringify(result?.['cleanup_error'] ?? null);
  if (confirmed === true) {
    assert.deepEqual(alive, [], 'confirmed while a process of the run lives');
    return;
  }
  assert.equal(confirmed, false);
  assert.doesNotMatch(error, /of the run still alive|signal refused|^ps:/, 'a process the run could attribute was not ended');
  assert.match(error, alive.length > 0 ? /unattributed orphan/ : /unattributed orphan|no two consecutive ps tables/);
  const named = new Set([...error.matchAll(/(\d+) \(/g)].map((m) => Number(m[1])));
  const namedOfTrial = [...named].filter((pid) => seen.has(pid) || alive.includes(pid));
  for (const pid of alive)
    assert.ok(
      named.has(pid) || namedOfTrial.length > 0,
      `pid ${pid} of the run alive, and no process of the run reported as an unattributed orphan: ${error}`,
    );
}

/** Each escape class, and kill -9 of the supervisor mid-escape, under one backend. */
export function defineEscapeTests(backend: NamedBackend): void {
  for (const c of ESCAPE_CASES.filter((k) => k.only === undefined || k.only === backend.name)) {
    const kinds = c.escape.split(',');
    for (let trial = 0; trial < (c.trials ?? TRIALS); trial++) {
      test(`${backend.name}: escape: ${c.name} is ended and the run proves it (trial ${trial})`, async () => {
        const env = {
          FAKE_CLAUDE_SCENARIO: 'escape',
          FAKE_CLAUDE_ESCAPE: c.escape,
          FAKE_CLAUDE_ESCAPE_EXIT_FIRST: c.exitFirst ? '1' : '0',
        };
        await withTracedHarness(
          'crm-escape-',
          env,
          async (h, ready) => {
            const watch = watchNaming(ready, WATCH_MS);
            const out = await h.call('claude.run', { prompt: 'x', cwd: h.dir });
            watch.stop();
            assertEndedOrReported(out.result, ready, backend.name, watch.seen);
            if (out.result?.['cleanup_confirmed'] === true) assert.equal(out.isError, false, out.text.slice(0, 400));
            assert.equal((await h.full(out.result?.['run_id']))['cleanup_proof'], backend.name);
            if (!c.exitFirst && !kinds.includes('term_trap') && !kinds.includes('ssh_agent')) {
              // The escape really happened before the run ended: every escapee announced itself.
              const escapees = readReadyLines(ready).filter((l) => l.ready === 'escapee');
              assert.equal(escapees.length, kinds.length, JSON.stringify(escapees));
            }
          },
          { cleanupBackend: backend.option },
        );
      });
    }
  }

  for (let trial = 0; trial < 4; trial++) {
    const proven = backend.name === 'cgroup';
    test(`${backend.name}: kill -9 of the supervisor while the run has escaped children, the native exiting that instant: the adapter ends them all, reported ${proven ? 'confirmed by the cgroup' : 'unconfirmed'} (trial ${trial})`, async () => {
      const env = {
        FAKE_CLAUDE_SCENARIO: 'escape',
        FAKE_CLAUDE_ESCAPE: 'bash_bg,bash_setsid,double_fork',
        FAKE_CLAUDE_ESCAPE_HOLD: 'exit_with_parent',
      };
      await withTracedHarness(
        'crm-escape-',
        env,
        async (h, ready) => {
          const started = await h.call('claude.run.start', { prompt: 'x', cwd: h.dir });
          const runId = String(started.result?.['run_id']);
          const native = await waitForReady(ready, 'escaped');
          const supervisorPid = readProcStat(native.pid)?.ppid;
          assert.ok(supervisorPid !== undefined && supervisorPid > 1);
          process.kill(supervisorPid, 'SIGKILL');
          const { result } = await h.settled(runId);
          if (proven) {
            // The kernel showed the run's cgroup empty before the run settled: nothing may be alive now.
            assert.deepEqual(aliveNaming(ready), []);
            assert.equal(result['cleanup_confirmed'], true, JSON.stringify(result['cleanup_error']));
            assert.equal(at(result, 'error', 'code'), 'supervisor_failed');
            return;
          }
          // The fallback's SIGKILLs are sent before the run settles; the kernel finishes them a moment later (the
          // fallback proves nothing, so it does not wait): a process it missed would still be here at the deadline.
          await waitFor('nothing of the run alive', () => aliveNaming(ready).length === 0, 10_000);
          assert.equal(result['cleanup_confirmed'], false);
          assert.equal(at(result, 'cleanup_error', 'code'), 'supervisor_failed');
        },
        { cleanupBackend: backend.option },
      );
    });
  }
}

const CAMPAIGN_SEED = 0x0e5c_a9e5;
const CAMPAIGN_TRIALS = 12;
const KINDS = ['bash_bg', 'bash_nohup', 'bash_setsid', 'new_group', 'double_fork', 'scrubbed_lingering'] as const;

interface Trial {
  readonly kinds: readonly string[];
  readonly exitFirst: boolean;
  readonly versionLeaves: string | null;
  readonly cancelAtMs: number | null;
}

/** The whole campaign drawn up front from the seed, so each trial is a test of its own (own timeout, own line). */
function drawCampaign(): Trial[] {
  const random = createRandom(CAMPAIGN_SEED);
  const pick = <T>(items: readonly T[]): T => {
    const item = items[Math.floor(random() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  };
  return Array.from({ length: CAMPAIGN_TRIALS }, () => {
    const kinds: string[] = KINDS.filter(() => random() < 0.4);
    if (kinds.length === 0) kinds.push(pick(KINDS));
    // A scrubbed environment in a new session whose parent (the native) exits before the first scan is the
    // documented limit (docs/supervisor.md): the exit-first trials leave it out.
    const exitFirst = random() < 0.25 && !kinds.includes('scrubbed_lingering');
    const versionLeaves = random() < 0.3 ? pick(KINDS.filter((k) => k !== 'scrubbed_lingering')) : null;
    const cancelAtMs = !exitFirst && random() < 0.5 ? Math.floor(random() * 600) : null;
    return { kinds, exitFirst, versionLeaves, cancelAtMs };
  });
}

/** The seeded campaign (escape mixes, a version check that leaves processes, cancels) under one backend. */
export function defineEscapeCampaign(backend: NamedBackend): void {
  for (const [trial, { kinds, exitFirst, versionLeaves, cancelAtMs }] of drawCampaign().entries()) {
    const name = `${kinds.join(',')}${exitFirst ? ' exit-first' : ''}${versionLeaves ? ` version-leaves=${versionLeaves}` : ''}${cancelAtMs === null ? '' : ` cancel@${cancelAtMs}ms`}`;
    test(`${backend.name}: seeded escape campaign (seed ${CAMPAIGN_SEED}) trial ${trial}: ${name}: nothing left, confirmed`, async () => {
      const env = {
        FAKE_CLAUDE_SCENARIO: 'escape',
        FAKE_CLAUDE_ESCAPE: kinds.join(','),
        FAKE_CLAUDE_ESCAPE_EXIT_FIRST: exitFirst ? '1' : '0',
        FAKE_CLAUDE_ESCAPE_HOLD: cancelAtMs === null ? '' : 'hang',
        ...(versionLeaves === null ? {} : { FAKE_CLAUDE_VERSION_MODE: versionLeaves }),
      };
      await withTracedHarness(
        'crm-escape-',
        env,
        async (h, ready) => {
          const watch = watchNaming(ready, WATCH_MS);
          const started = await h.call('claude.run.start', { prompt: `trial ${trial}`, cwd: h.dir });
          const runId = String(started.result?.['run_id']);
          if (cancelAtMs !== null) {
            await delay(cancelAtMs);
            await h.call('claude.run.cancel', { run_id: runId });
          }
          const { result } = await h.settled(runId);
          watch.stop();
          assertEndedOrReported(result, ready, backend.name, watch.seen);
        },
        { cleanupBackend: backend.option },
      );
    });
  }
}
