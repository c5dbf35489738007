/** What cgroup.events says (lib/process/cgroup-events.ts), read from directories that stand in for cgroups. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupPopulation, waitUntilEmpty } from '../../lib/process/cgroup-events.ts';

/** A directory that looks like a cgroup to the readers: its cgroup.events says `text` (absent when null). */
function fakeCgroup(events: string | null): string {
  const dir = mkdtempSync(join(tmpdir(), 'crm-fake-cgroup-'));
  if (events !== null) writeFileSync(join(dir, 'cgroup.events'), events);
  return dir;
}

test('cgroup.events that cannot be read or says nothing is `unreadable`, never empty; a removed cgroup is `gone`', async () => {
  const missing = fakeCgroup(null);
  const garbled = fakeCgroup('frozen 0\n');
  const empty = fakeCgroup('populated 0\nfrozen 0\n');
  const full = fakeCgroup('populated 1\nfrozen 0\n');
  try {
    assert.equal(cgroupPopulation(missing), 'unreadable');
    assert.equal(cgroupPopulation(garbled), 'unreadable');
    assert.equal(cgroupPopulation(empty), 'empty');
    assert.equal(cgroupPopulation(full), 'populated');
    assert.equal(cgroupPopulation(join(missing, 'no-such-cgroup')), 'gone');
    // A wait for emptiness never ends on an unreadable file: it runs to its bound and says false.
    const started = performance.now();
    assert.equal(await waitUntilEmpty(garbled, 100), false);
    assert.ok(performance.now() - started >= 99);
    assert.equal(await waitUntilEmpty(empty, 100), true);
  } finally {
    for (const dir of [missing, garbled, empty, full]) rmSync(dir, { recursive: true, force: true });
  }
});
