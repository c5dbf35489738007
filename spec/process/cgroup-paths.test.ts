/** Pure cgroup v2 pieces: the mount table, this process's cgroup line, the directory, our cgroups' names; the backend choice. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cgroupDirectory, cgroupName, cgroupOwner, parseCgroup2Mount, parseUnifiedCgroupPath } from '../../lib/process/cgroup-paths.ts';
import { chooseCleanupBackend, CleanupBackendUnavailable, describeCleanup } from '../../lib/supervisor/parent/cleanup-backend.ts';
import type { CgroupDetection } from '../../lib/process/cgroup.ts';

const HYBRID = [
  '30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
  '40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');
const UNIFIED_RO = '25 20 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate';
const NAMESPACED = '25 20 0:22 /user.slice /sys/fs/cgroup\\040x rw,relatime - cgroup2 cgroup2 rw';

test('parseCgroup2Mount finds the unified hierarchy beside v1 controllers, its read-only flag, escapes and root', () => {
  assert.deepEqual(parseCgroup2Mount(HYBRID), { mountPoint: '/sys/fs/cgroup/unified', root: '/', readOnly: false });
  assert.deepEqual(parseCgroup2Mount(UNIFIED_RO), { mountPoint: '/sys/fs/cgroup', root: '/', readOnly: true });
  assert.deepEqual(parseCgroup2Mount(NAMESPACED), { mountPoint: '/sys/fs/cgroup x', root: '/user.slice', readOnly: false });
  assert.equal(parseCgroup2Mount('31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n'), null);
  assert.equal(parseCgroup2Mount(''), null);
});

test('parseUnifiedCgroupPath reads the 0:: line only, and refuses a deleted cgroup', () => {
  assert.equal(
    parseUnifiedCgroupPath('9:name=systemd:/\n4:memory:/x\n0::/user.slice/user-1000.slice/session-2.scope\n'),
    '/user.slice/user-1000.slice/session-2.scope',
  );
  assert.equal(parseUnifiedCgroupPath('0::/\n'), '/');
  assert.equal(parseUnifiedCgroupPath('9:name=systemd:/\n'), null);
  assert.equal(parseUnifiedCgroupPath('0::/gone (deleted)\n'), null);
});

test('cgroupDirectory maps a cgroup path under the mount, and refuses one the mount does not show', () => {
  const root = { mountPoint: '/sys/fs/cgroup', root: '/', readOnly: false };
  assert.equal(cgroupDirectory(root, '/'), '/sys/fs/cgroup');
  assert.equal(cgroupDirectory(root, '/a/b'), '/sys/fs/cgroup/a/b');
  const narrowed = { mountPoint: '/sys/fs/cgroup/', root: '/user.slice', readOnly: false };
  assert.equal(cgroupDirectory(narrowed, '/user.slice'), '/sys/fs/cgroup');
  assert.equal(cgroupDirectory(narrowed, '/user.slice/u.scope'), '/sys/fs/cgroup/u.scope');
  assert.equal(cgroupDirectory(narrowed, '/user.sliceX/u.scope'), null);
  assert.equal(cgroupDirectory(narrowed, '/system.slice'), null);
});

test('our cgroups are named after their owner, and only such names are ours', () => {
  const owner = { pid: 4242, start: '123456789' };
  assert.equal(cgroupName(owner), 'claude-run-mcp-4242-123456789');
  assert.deepEqual(cgroupOwner(cgroupName(owner)), owner);
  for (const name of [
    'claude-run-mcp-0-1',
    'claude-run-mcp-12',
    'claude-run-mcp-1-2-3',
    'crm-spec-1-2',
    'user.slice',
    'claude-run-mcp-x-1',
  ])
    assert.equal(cgroupOwner(name), null, name);
});

test('chooseCleanupBackend: auto takes a cgroup where one can be had, falls back with the reason; forced choices hold', () => {
  const found: CgroupDetection = { ok: true, base: '/sys/fs/cgroup/unified', kill: 'cgroup.kill' };
  const missing: CgroupDetection = { ok: false, reason: 'not_writable', detail: 'no delegation' };
  let detections = 0;
  const detect = (d: CgroupDetection) => () => {
    detections++;
    return d;
  };
  assert.deepEqual(chooseCleanupBackend('auto', detect(found)), { kind: 'cgroup', base: '/sys/fs/cgroup/unified', kill: 'cgroup.kill' });
  assert.deepEqual(chooseCleanupBackend('auto', detect(missing)), {
    kind: 'process_scan',
    reason: 'not_writable',
    detail: 'no delegation',
  });
  assert.deepEqual(chooseCleanupBackend('cgroup', detect(found)), { kind: 'cgroup', base: '/sys/fs/cgroup/unified', kill: 'cgroup.kill' });
  assert.throws(
    () => chooseCleanupBackend('cgroup', detect(missing)),
    (e: unknown) => e instanceof CleanupBackendUnavailable && e.reason === 'not_writable',
  );
  const before = detections;
  assert.equal(chooseCleanupBackend('process_scan', detect(found)).kind, 'process_scan');
  assert.equal(detections, before, 'process_scan does not even look');
});

test('chooseCleanupBackend on darwin: ps_scan for auto and ps_scan, the others refused for the platform, no detection', () => {
  let detections = 0;
  const detect = (): CgroupDetection => {
    detections++;
    return { ok: true, base: '/sys/fs/cgroup', kill: 'cgroup.kill' };
  };
  for (const option of ['auto', 'ps_scan'] as const) {
    const backend = chooseCleanupBackend(option, detect, 'darwin');
    assert.equal(backend.kind, 'ps_scan');
    assert.equal(backend.kind === 'ps_scan' && backend.reason, 'platform');
  }
  for (const option of ['cgroup', 'process_scan'] as const)
    assert.throws(
      () => chooseCleanupBackend(option, detect, 'darwin'),
      (e: unknown) =>
        e instanceof CleanupBackendUnavailable &&
        e.reason === 'platform' &&
        e.backend === option &&
        e.message.includes(`the ${option} cleanup backend`),
    );
  assert.equal(detections, 0, 'no cgroup detection is ever attempted on darwin');
  assert.deepEqual(chooseCleanupBackend('ps_scan', detect, 'linux'), {
    kind: 'ps_scan',
    reason: 'forced_off',
    detail: 'the ps_scan backend was chosen explicitly',
  });
  assert.equal(detections, 0, 'a forced ps_scan on Linux does not look either');
  assert.deepEqual(describeCleanup(chooseCleanupBackend('auto', detect, 'darwin'), 'darwin'), {
    backend: 'ps_scan',
    platform: 'darwin',
    cgroup: null,
    kill: null,
    fallback_reason: 'platform',
    fallback_detail: 'macOS has no cgroups and no /proc: cleanup is proven by signals and the system ps',
  });
});
