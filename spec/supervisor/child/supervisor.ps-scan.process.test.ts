/**
 * A supervisor on the portable source (`--cleanup=ps_scan`) against the real process table: what its tables can
 * attribute to the run is ended and the run confirmed; what got away before any table saw it is reported as an
 * unattributed orphan and left alive.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { identify, isRunning, killIfRunning, readReadyLines, waitFor, waitForReady } from '../../helpers/proc.ts';
import { startFake } from '../harness.ts';
import type { ProcessIdentity } from '../../../lib/supervisor/protocol.ts';
import { PS_SCAN } from '../../helpers/backends.ts';
import { cmdlineOf } from '../../faults/proc-helpers.ts';
import { SUPERVISOR_PS_SCAN_ARG } from '../../../lib/supervisor/supervisor-args.ts';

const FAST = { interruptGraceMs: 1500, termGraceMs: 800, killGraceMs: 800 };

type Cleanup =
  { readonly confirmed: boolean; readonly error: string | null; readonly survivors: readonly ProcessIdentity[] } | null | undefined;

/**
 * Confirmed, or unconfirmed only by unattributed orphans none of which is `ours`: on this shared machine other
 * jobs daemonize (strace -D) during the run, and a stranger's orphan honestly leaves the run unproven.
 */
function assertConfirmedBut(cleanup: Cleanup, ours: readonly (ProcessIdentity | null)[]): void {
  if (cleanup?.confirmed === true) return;
  assert.match(cleanup?.error ?? '', /^unattributed orphan/, JSON.stringify(cleanup));
  for (const id of ours) assert.ok(!cleanup?.survivors.some((s) => s.pid === id?.pid), `${String(id?.pid)} of the run reported, not ended`);
}

test('ps_scan: a grandchild in the supervisor group holding stdout is ended after the native exit, confirmed on ps tables', async () => {
  const fake = startFake('grandchild_holds_stdout', { spec: FAST, cleanup: PS_SCAN });
  let grandchild: ProcessIdentity | null = null;
  try {
    const supervisor = fake.run.supervisorPid;
    assert.ok(supervisor !== null && cmdlineOf(supervisor).includes(SUPERVISOR_PS_SCAN_ARG), 'the supervisor was told its source');
    const line = await waitFor('ready "grandchild"', () => readReadyLines(fake.readyFile).find((l) => l.ready === 'grandchild'));
    grandchild = identify(line.pid);
    const outcome = await fake.run.done;
    assert.equal(outcome.cleanup?.proof, 'ps_scan');
    // Re-parented to init, it is still in the supervisor's group: the run's, whatever its parent.
    assertConfirmedBut(outcome.cleanup, [grandchild]);
    assert.ok(outcome.cleanup?.steps.includes('SIGTERM:group'), JSON.stringify(outcome.cleanup?.steps));
    assert.equal(grandchild !== null && isRunning(grandchild), false);
  } finally {
    killIfRunning([grandchild]);
    fake.dispose();
  }
});

test('ps_scan: terminate while a setsid child lives: the ladder’s first table links it by ppid, it is ended, confirmed', async () => {
  const fake = startFake('setsid_child', { spec: FAST, cleanup: PS_SCAN, env: { FAKE_CLAUDE_HOLD_MS: 'hang' } });
  let child: ProcessIdentity | null = null;
  try {
    child = await waitForReady(fake.readyFile, 'setsid');
    await waitForReady(fake.readyFile, 'native');
    fake.run.terminate('cancel');
    const outcome = await fake.run.done;
    assert.deepEqual(outcome.cleanup?.steps.slice(0, 2), ['terminate:cancel', 'SIGINT:native']);
    assertConfirmedBut(outcome.cleanup, [child]);
    assert.equal(isRunning(child), false);
  } finally {
    killIfRunning([child]);
    fake.dispose();
  }
});

test('ps_scan: a setsid child orphaned before any table saw it is reported as an unattributed orphan and left alive', async () => {
  // The native exits 300 ms after its child announced itself, long before the first tracking table (2 s).
  const fake = startFake('setsid_child', { spec: FAST, cleanup: PS_SCAN, env: { FAKE_CLAUDE_HOLD_MS: '300' } });
  let child: ProcessIdentity | null = null;
  try {
    child = await waitForReady(fake.readyFile, 'setsid');
    const outcome = await fake.run.done;
    if (outcome.cleanup?.confirmed === true) {
      // A loaded machine delayed the native past the first table, which linked the child: then it was ended.
      assert.equal(isRunning(child), false);
      return;
    }
    assert.equal(isRunning(child), true, 'an unattributed orphan is never signalled');
    assert.ok(
      outcome.cleanup?.survivors.some((s) => s.pid === child?.pid),
      JSON.stringify(outcome.cleanup),
    );
    assert.match(outcome.cleanup?.error ?? '', new RegExp(`unattributed orphan.*\\b${child.pid} \\(`));
  } finally {
    killIfRunning([child]);
    fake.dispose();
  }
});
