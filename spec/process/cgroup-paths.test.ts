/**
 * Pure cgroup v2 pieces: the mount table, this process's cgroup line, the directory, our cgroups' names and
 * owners, what a sweep may end; the backend choice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cgroupDirectory,
  cgroupName,
  cgroupNameOwner,
  describeCgroupSweep,
  hasCgroup2Mount,
  parseCgroup2Mount,
  parseMountInfo,
  parseUnifiedCgroupPath,
  planCgroupSweep,
} from '../../lib/process/cgroup-paths.ts';
import { formatOwner, judgeOwner, parseOwner, parsePidSpace, type ProcessState } from '../../lib/process/owner.ts';
import { chooseCleanupBackend, CleanupBackendUnavailable, describeCleanup } from '../../lib/supervisor/parent/cleanup-backend.ts';
import { detectCgroup, type CgroupDetection } from '../../lib/process/cgroup.ts';

const HYBRID = [
  '30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
  '40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');
const UNIFIED_RO = '25 20 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate';
const NAMESPACED = '25 20 0:22 /user.slice /sys/fs/cgroup\\040x rw,relatime - cgroup2 cgroup2 rw';

test('parseCgroup2Mount finds the unified hierarchy beside v1 controllers, its read-only flag, escapes and root', () => {
  assert.deepEqual(parseCgroup2Mount(HYBRID, '/user.slice'), { mountPoint: '/sys/fs/cgroup/unified', root: '/', readOnly: false });
  assert.deepEqual(parseCgroup2Mount(UNIFIED_RO, '/'), { mountPoint: '/sys/fs/cgroup', root: '/', readOnly: true });
  assert.deepEqual(parseCgroup2Mount(NAMESPACED, '/user.slice/a.scope'), {
    mountPoint: '/sys/fs/cgroup x',
    root: '/user.slice',
    readOnly: false,
  });
  assert.equal(parseCgroup2Mount('31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n', '/'), null);
  assert.equal(parseCgroup2Mount('', '/'), null);
  assert.equal(hasCgroup2Mount(HYBRID), true);
  assert.equal(hasCgroup2Mount('31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu'), false);
});

test('parseCgroup2Mount: a first cgroup2 mount that does not show this cgroup is passed over for one that does', () => {
  // A bind of a sibling subtree listed first (as a container runtime leaves it), then the whole hierarchy.
  const text = [
    '25 20 0:22 /system.slice/other.scope /run/other-cgroup rw - cgroup2 cgroup2 rw',
    '26 20 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw',
  ].join('\n');
  assert.deepEqual(parseCgroup2Mount(text, '/user.slice/u.scope'), { mountPoint: '/sys/fs/cgroup', root: '/', readOnly: false });
  assert.equal(parseCgroup2Mount(text.split('\n')[0]!, '/user.slice/u.scope'), null, 'none shows it');
});

test('parseCgroup2Mount: a first cgroup2 mount hidden by a later mount at or above its mount point is passed over', () => {
  const stacked = [
    '20 1 8:1 / / rw - ext4 /dev/sda1 rw',
    '21 20 0:20 / /sys rw - sysfs sysfs rw',
    '25 21 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw',
    // A tmpfs over /sys/fs hides the first (writable) cgroup2 mount; a read-only one is mounted beneath the tmpfs.
    '30 21 0:40 / /sys/fs rw - tmpfs tmpfs rw',
    '31 30 0:22 / /sys/fs/cgroup ro - cgroup2 cgroup2 rw,nsdelegate',
  ].join('\n');
  assert.deepEqual(parseCgroup2Mount(stacked, '/a'), { mountPoint: '/sys/fs/cgroup', root: '/', readOnly: true }, 'visible beats writable');
  // Overmounted at the very same point by a read-only bind of a narrower root: the visible one is the later.
  const overmounted = [
    '20 1 8:1 / / rw - ext4 /dev/sda1 rw',
    '25 20 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw',
    '26 25 0:22 /user.slice /sys/fs/cgroup ro - cgroup2 cgroup2 rw',
  ].join('\n');
  assert.deepEqual(parseCgroup2Mount(overmounted, '/user.slice/u.scope'), {
    mountPoint: '/sys/fs/cgroup',
    root: '/user.slice',
    readOnly: true,
  });
  assert.equal(parseCgroup2Mount(overmounted, '/system.slice/s.scope'), null, 'the hidden mount would have shown it: not reachable');
  // Mounts below a cgroup2 mount point (a child's own) do not hide it.
  const below = ['25 20 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw', '27 25 0:41 / /sys/fs/cgroup/x rw - tmpfs tmpfs rw'].join('\n');
  assert.deepEqual(parseCgroup2Mount(below, '/'), { mountPoint: '/sys/fs/cgroup', root: '/', readOnly: false });
});

test('parseCgroup2Mount: a writable mount is preferred over a read-only one that shows the same cgroup', () => {
  const text = [
    '25 20 0:22 / /sys/fs/cgroup ro - cgroup2 cgroup2 rw',
    '26 20 0:22 /user.slice /run/user-cgroup rw - cgroup2 cgroup2 rw',
  ].join('\n');
  assert.deepEqual(parseCgroup2Mount(text, '/user.slice/u.scope'), {
    mountPoint: '/run/user-cgroup',
    root: '/user.slice',
    readOnly: false,
  });
});

test('detectCgroup tells no cgroup2 mount from none that shows this cgroup, and reads the flag of the one chosen', () => {
  const self = { pidNamespace: '1', boot: '0123456789abcdef0123456789abcdef', pid: 2, start: '3' };
  const reason = (mountinfo: string, selfCgroup: string): string | null => {
    const found = detectCgroup({ mountinfo, selfCgroup, self });
    return found.ok ? null : found.reason;
  };
  assert.equal(reason('31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu', '0::/a\n'), 'no_cgroup2_mount');
  assert.equal(reason('25 20 0:22 /system.slice /sys/fs/cgroup rw - cgroup2 cgroup2 rw', '0::/user.slice/a\n'), 'not_in_cgroup2');
  assert.equal(reason('25 20 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw', '0::/gone (deleted)\n'), 'not_in_cgroup2');
  // The first mount (writable) does not show the cgroup; the one that does is read-only: that is the answer.
  const text = ['25 20 0:22 /system.slice /run/a rw - cgroup2 cgroup2 rw', '26 20 0:22 / /sys/fs/cgroup ro - cgroup2 cgroup2 rw'].join(
    '\n',
  );
  assert.equal(reason(text, '0::/user.slice/a\n'), 'read_only');
});

test('parseMountInfo reads ids, parents, escapes and the type after optional fields; skips malformed lines', () => {
  assert.deepEqual(parseMountInfo('40 30 0:37 / /a\\040b rw,relatime shared:4 master:1 - cgroup2 cgroup2 rw\nnonsense\n'), [
    { id: 40, parent: 30, root: '/', mountPoint: '/a b', readOnly: false, fsType: 'cgroup2' },
  ]);
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

const BOOT = '0123456789abcdef';
const HERE = { pidNamespace: '4026531836', boot: BOOT };

test('an owner renders as namespace.pid.start.boot (base 36, the boot tag) and only that parses back', () => {
  const owner = { ...HERE, pid: 4242, start: '123456789' };
  assert.equal(formatOwner(owner), `1ulajuk.39u.21i3v9.${BOOT}`);
  assert.deepEqual(parseOwner(formatOwner(owner)), owner);
  for (const text of [
    '4242-123456789',
    `1.0.2.${BOOT}`,
    `1.2.3.${BOOT.toUpperCase()}`,
    `1.2.3.${BOOT}0`,
    `X.2.3.${BOOT}`,
    `01.2.3.${BOOT}`,
    `1.2.3.${BOOT}${BOOT}`,
    `1.2.3`,
    `1.12345678.3.${BOOT}`,
  ])
    assert.equal(parseOwner(text), null, text);
  assert.deepEqual(
    parsePidSpace('pid:[4026531836]', '01234567-89AB-cdef-0123-456789abcdef\n'),
    HERE,
    'the boot tag is the first 16 hex digits',
  );
  assert.equal(parsePidSpace('net:[4026531836]', BOOT), null);
  assert.equal(parsePidSpace('pid:[4026531836]', 'not a boot id'), null);
});

test("our cgroups are named after their owner in its pid space; an earlier release's name and a garbled one are told apart", () => {
  const owner = { ...HERE, pid: 4242, start: '123456789' };
  assert.equal(cgroupName(owner), `claude-run-mcp-1ulajuk.39u.21i3v9.${BOOT}`);
  assert.deepEqual(cgroupNameOwner(cgroupName(owner)), { kind: 'owner', owner });
  assert.deepEqual(cgroupNameOwner('claude-run-mcp-4242-123456789'), { kind: 'legacy' });
  for (const name of ['claude-run-mcp-0-1x', 'claude-run-mcp-12', `claude-run-mcp-1.0.3.${BOOT}`, 'claude-run-mcp-x-1'])
    assert.deepEqual(cgroupNameOwner(name), { kind: 'unparsable' }, name);
  for (const name of ['crm-spec-1-2', 'user.slice', 'claude-run-mc-1-2']) assert.equal(cgroupNameOwner(name), null, name);
});

test('judgeOwner: dead only in this namespace and boot, and only when /proc says gone', () => {
  const states: Record<number, ProcessState> = { 11: 'gone', 12: 'alive', 13: 'unknown' };
  const state = (id: { pid: number }): ProcessState => states[id.pid] ?? 'gone';
  const self = { pid: 10, start: '100' };
  const at = (pid: number, over: object = {}) => ({ ...HERE, pid, start: '5', ...over });
  assert.equal(judgeOwner(at(11), HERE, self, state), 'dead');
  assert.equal(judgeOwner(at(12), HERE, self, state), 'alive');
  assert.equal(judgeOwner(at(13), HERE, self, state), 'unknown');
  assert.equal(judgeOwner(at(11, { pidNamespace: '4026532000' }), HERE, self, state), 'foreign');
  assert.equal(judgeOwner(at(11, { boot: 'f'.repeat(32) }), HERE, self, state), 'foreign');
  assert.equal(
    judgeOwner(at(10, { start: '100' }), HERE, self, () => 'gone'),
    'self',
  );
});

test('planCgroupSweep ends only provably dead owners of this pid space and reports foreign, unknown, legacy and garbled ones', () => {
  const name = (pid: number, over: object = {}) => cgroupName({ ...HERE, pid, start: '5', ...over });
  const state = (id: { pid: number }): ProcessState => (id.pid === 12 ? 'alive' : id.pid === 13 ? 'unknown' : 'gone');
  const names = [
    name(11),
    name(12),
    name(13),
    name(11, { pidNamespace: '4026532000' }),
    name(11, { boot: 'f'.repeat(16) }),
    'claude-run-mcp-11-5',
    'claude-run-mcp-oops',
    'crm-spec-1234',
  ];
  const plan = planCgroupSweep(names, HERE, null, state);
  assert.deepEqual(plan.dead, [name(11)]);
  assert.deepEqual(plan.kept, [
    { name: name(13), reason: 'unknown' },
    { name: names[3], reason: 'foreign' },
    { name: names[4], reason: 'foreign' },
    { name: 'claude-run-mcp-11-5', reason: 'legacy' },
    { name: 'claude-run-mcp-oops', reason: 'unparsable' },
  ]);
  const blind = planCgroupSweep([name(11)], null, null, state);
  assert.deepEqual(blind, { dead: [], kept: [{ name: name(11), reason: 'unknown' }] }, 'without its own pid space nothing is proved');
  assert.equal(
    describeCgroupSweep({ removed: plan.dead, kept: plan.kept }),
    'cgroup sweep: removed 1 run cgroup(s) of dead owners; left 5 (1 unknown, 2 foreign, 1 legacy, 1 unparsable)',
  );
  assert.equal(describeCgroupSweep({ removed: [], kept: [] }), null);
});

test('chooseCleanupBackend: auto takes a cgroup where one can be had, falls back with the reason; forced choices hold', () => {
  const found: CgroupDetection = { ok: true, base: '/sys/fs/cgroup/unified', kill: 'cgroup.kill' };
  const missing: CgroupDetection = { ok: false, reason: 'not_writable', detail: 'no delegation' };
  let detections = 0;
  const detect = (d: CgroupDetection) => () => {
    detections++;
    return d;
  };
  assert.deepEqual(chooseCleanupBackend('auto', detect(found)), {
    kind: 'cgroup',
    base: '/sys/fs/cgroup/unified',
    kill: 'cgroup.kill',
    forced: false,
  });
  assert.deepEqual(chooseCleanupBackend('auto', detect(missing)), {
    kind: 'process_scan',
    reason: 'not_writable',
    detail: 'no delegation',
  });
  assert.deepEqual(chooseCleanupBackend('cgroup', detect(found)), {
    kind: 'cgroup',
    base: '/sys/fs/cgroup/unified',
    kill: 'cgroup.kill',
    forced: true,
  });
  assert.throws(
    () => chooseCleanupBackend('cgroup', detect(missing)),
    (e: unknown) => e instanceof CleanupBackendUnavailable && e.reason === 'not_writable',
  );
  const before = detections;
  assert.equal(chooseCleanupBackend('process_scan', detect(found)).kind, 'process_scan');
  assert.equal(detections, before, 'process_scan does not even look');
});

test('describeCleanup: whether the cgroup backend was forced, and how many runs fell back to /proc (null without a cgroup)', () => {
  assert.deepEqual(describeCleanup({ kind: 'cgroup', base: '/b', kill: 'freeze', forced: false }, 'linux', 3), {
    backend: 'cgroup',
    platform: 'linux',
    cgroup: '/b',
    kill: 'freeze',
    forced: false,
    fallback_reason: null,
    fallback_detail: null,
    fallback_runs: 3,
  });
  assert.equal(describeCleanup({ kind: 'cgroup', base: '/b', kill: 'cgroup.kill', forced: true })['fallback_runs'], 0);
  assert.deepEqual(describeCleanup({ kind: 'process_scan', reason: 'not_writable', detail: 'd' }, 'linux', 5), {
    backend: 'process_scan',
    platform: 'linux',
    cgroup: null,
    kill: null,
    forced: false,
    fallback_reason: 'not_writable',
    fallback_detail: 'd',
    fallback_runs: null,
  });
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
    forced: false,
    fallback_detail: 'macOS has no cgroups and no /proc: cleanup is proven by signals and the system ps',
    fallback_runs: null,
  });
});

test('a /proc of another pid namespace refuses every backend on Linux (its pids name others), never looked at on darwin', () => {
  const detect = (): CgroupDetection => ({ ok: true, base: '/sys/fs/cgroup', kill: 'cgroup.kill' });
  for (const option of ['auto', 'cgroup', 'process_scan', 'ps_scan'] as const)
    assert.throws(
      () => chooseCleanupBackend(option, detect, 'linux', () => false),
      (e: unknown) => e instanceof CleanupBackendUnavailable && e.reason === 'proc_foreign' && e.backend === option,
      option,
    );
  let looked = false;
  const backend = chooseCleanupBackend('auto', detect, 'darwin', () => {
    looked = true;
    return false;
  });
  assert.deepEqual([backend.kind, looked], ['ps_scan', false]);
});
