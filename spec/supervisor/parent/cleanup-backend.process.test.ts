/**
 * A run whose own cgroup cannot be made (`cgroup.max.descendants` reached on its base), on the real kernel
 * (root here): a forced cgroup backend refuses it with nothing started, `auto` tracks it through /proc and says
 * so (its proof, its steps, and the capabilities' count of such runs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectOwnCgroup } from '../../../lib/process/cgroup.ts';
import { selfOwner } from '../../../lib/process/proc-table.ts';
import { SPAWN_ERROR_NO_CGROUP } from '../../../lib/supervisor/protocol.ts';
import type { CleanupBackend } from '../../../lib/supervisor/parent/cleanup-backend.ts';
import { prepareSupervisor } from '../../../lib/supervisor/parent/run-supervised.ts';
import { startFake } from '../harness.ts';
import { createToolHarness } from '../../helpers/tool-harness.ts';
import { parseObj } from '../../helpers/typed-results.ts';
import { isJsonObject } from '../../helpers/typed-results.ts';

function ownBase(): string {
  const owner = selfOwner();
  assert.ok(owner !== null);
  const found = detectOwnCgroup(owner);
  assert.ok(found.ok, JSON.stringify(found));
  return found.base;
}

/** A cgroup under this process's own that can hold no child cgroup at all. */
function fullBase(name: string): string {
  const dir = join(ownBase(), `crm-spec-${name}-${process.pid}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'cgroup.max.descendants'), '0');
  return dir;
}

/** Sets `cgroup.max.descendants` of `dir` to what it holds now (no further child can be made); restores on `undo`. */
function capDescendants(dir: string): { undo(): void } {
  const before = readFileSync(join(dir, 'cgroup.max.descendants'), 'latin1').trim();
  const now = /^nr_descendants (\d+)$/m.exec(readFileSync(join(dir, 'cgroup.stat'), 'latin1'))?.[1];
  assert.ok(now !== undefined);
  writeFileSync(join(dir, 'cgroup.max.descendants'), now);
  return {
    undo: () => {
      writeFileSync(join(dir, 'cgroup.max.descendants'), before);
    },
  };
}

const cgroupBackend = (base: string, forced: boolean): CleanupBackend => ({ kind: 'cgroup', base, kill: 'cgroup.kill', forced });

test('forced cgroup backend, run cgroup cannot be made: the supervisor starts nothing and reports CGROUP_UNAVAILABLE', async () => {
  const base = fullBase('forced');
  let fallbacks = 0;
  const fake = startFake('ok', { cleanup: cgroupBackend(base, true), onFallback: () => fallbacks++ });
  try {
    const outcome = await fake.run.done;
    assert.equal(outcome.spawnError?.code, SPAWN_ERROR_NO_CGROUP, JSON.stringify(outcome));
    assert.match(String(outcome.spawnError?.message), /could not be created \(EAGAIN\); nothing was started/);
    assert.equal(outcome.spawned, null);
    assert.equal(outcome.exit, null);
    // The fake native announces itself first thing: it never ran.
    assert.deepEqual(readFileSync(fake.readyFile, { encoding: 'utf8', flag: 'a+' }), '', 'the native never started');
    assert.equal(outcome.cleanup?.confirmed, true);
    assert.equal(fallbacks, 0);
    assert.deepEqual(
      readdirSync(base, { withFileTypes: true }).filter((e) => e.isDirectory()),
      [],
    );
  } finally {
    fake.dispose();
    rmdirSync(base);
  }
});

test('auto, run cgroup cannot be made: the run goes on under /proc tracking, proof process_scan, and says why', async () => {
  const base = fullBase('auto');
  let fallbacks = 0;
  const fake = startFake('ok', { cleanup: cgroupBackend(base, false), onFallback: () => fallbacks++ });
  try {
    const outcome = await fake.run.done;
    assert.equal(outcome.spawnError, null);
    assert.deepEqual(outcome.exit, { code: 0, signal: null });
    assert.equal(outcome.cleanup?.proof, 'process_scan');
    assert.ok(
      outcome.cleanup?.steps.some((step) => /^cgroup_unavailable:.*could not be created \(EAGAIN\)$/.test(step)),
      JSON.stringify(outcome.cleanup?.steps),
    );
    assert.equal(fallbacks, 1);
  } finally {
    fake.dispose();
    rmdirSync(base);
  }
});

test('a supervisor let go before any command is no fallback, even where no run cgroup could be made', async () => {
  const base = fullBase('idle');
  let fallbacks = 0;
  try {
    const prepared = prepareSupervisor(undefined, { cleanup: cgroupBackend(base, false), onFallback: () => fallbacks++ });
    const outcome = await prepared.dispose();
    assert.equal(outcome.cleanup?.proof, 'process_scan', 'it never made a cgroup: nothing ran');
    assert.equal(fallbacks, 0);
  } finally {
    rmdirSync(base);
  }
});

async function capabilitiesCleanup(h: Awaited<ReturnType<typeof createToolHarness>>): Promise<Record<string, unknown>> {
  const read = await h.request('resources/read', { uri: 'claude-run://capabilities' });
  const result = read['result'];
  assert.ok(isJsonObject(result) && Array.isArray(result['contents']) && isJsonObject(result['contents'][0]));
  const cleanup = parseObj(String(result['contents'][0]['text']), 'capabilities')['cleanup'];
  assert.ok(isJsonObject(cleanup));
  return cleanup;
}

test('through the tools: forced, the run fails cgroup_unavailable with no process started; auto, it runs and the capabilities count it', async () => {
  const records = mkdtempSync(join(tmpdir(), 'crm-records-'));
  const env = { FAKE_CLAUDE_RECORD_DIR: records };
  const forced = await createToolHarness({ env, config: { cleanupBackend: 'cgroup' } });
  const auto = await createToolHarness({ env, config: { cleanupBackend: 'auto' } });
  // Both detected a usable cgroup; from now on their base can hold no new child cgroup.
  const cap = capDescendants(ownBase());
  try {
    assert.deepEqual(
      { forced: (await capabilitiesCleanup(forced))['forced'], runs: (await capabilitiesCleanup(forced))['fallback_runs'] },
      { forced: true, runs: 0 },
    );
    const refused = await forced.call('claude.run', { prompt: 'x', cwd: forced.dir });
    assert.equal(refused.error?.code, 'cgroup_unavailable', refused.text);
    assert.deepEqual(readdirSync(records), [], 'not even the version check ran');
    assert.equal((await capabilitiesCleanup(forced))['fallback_runs'], 0);

    const ran = await auto.call('claude.run', { prompt: 'x', cwd: auto.dir });
    assert.equal(ran.isError, false, ran.text);
    const full = await auto.full(ran.result?.['run_id']);
    assert.deepEqual({ proof: full['cleanup_proof'], confirmed: full['cleanup_confirmed'] }, { proof: 'process_scan', confirmed: true });
    const cleanup = await capabilitiesCleanup(auto);
    assert.deepEqual(
      { backend: cleanup['backend'], forced: cleanup['forced'], runs: cleanup['fallback_runs'] },
      { backend: 'cgroup', forced: false, runs: 1 },
    );
  } finally {
    cap.undo();
    await forced.close();
    await auto.close();
    rmSync(records, { recursive: true, force: true });
  }
});
