import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeViolations, forbiddenRule, judgeTrace, NODE_OWN_READS, type TraceRules } from './darwin-trace.ts';
import { parseStrace } from './strace.ts';

const RULES: TraceRules = { productScript: '/b/bundle.cjs', preload: '/f/platform-preload.cjs' };
const CLONE_THREAD =
  'clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS, child_tid=0x1, exit_signal=0} => {parent_tid=[%]}, 88) = %';
const FORK = 'clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = %';
const open = (tid: number, path: string): string => `${tid} openat(AT_FDCWD</w>, "${path}", O_RDONLY|O_CLOEXEC) = 17`;

/** A server (100) that starts a supervisor (200), which starts the fake CLI (300) and `ps` (400). */
function trace(extra: { server?: string[]; supervisor?: string[]; fake?: string[]; thread?: string[] } = {}): string {
  return [
    '100 execve("/usr/bin/node", ["/usr/bin/node", "--require", "/f/platform-preload.cjs", "/b/bundle.cjs"], 0x1 /* 9 vars */) = 0',
    open(100, '/proc/self/cgroup'),
    open(100, '/sys/fs/cgroup/memory/a/b/memory.limit_in_bytes'),
    open(100, '/proc/meminfo'),
    open(100, '/proc/self/maps'),
    '100 readlink("/proc/self/exe", "/usr/bin/node", 8191) = 13',
    open(100, '/f/platform-preload.cjs'),
    open(100, '/b/bundle.cjs'),
    `100 ${CLONE_THREAD.replaceAll('%', '101')}`,
    ...(extra.thread ?? []),
    ...(extra.server ?? []),
    `100 ${FORK.replace('%', '200')}`,
    '200 execve("/usr/bin/node", ["/usr/bin/node", "/b/bundle.cjs", "__supervisor"], 0x1 /* 9 vars */) = 0',
    open(200, '/proc/self/cgroup'),
    open(200, '/b/bundle.cjs'),
    ...(extra.supervisor ?? []),
    `200 ${FORK.replace('%', '300')}`,
    '300 execve("/f/fake-claude.mjs", ["/f/fake-claude.mjs", "-p"], 0x1 /* 9 vars */) = 0',
    '300 execve("/usr/bin/node", ["node", "/f/fake-claude.mjs", "-p"], 0x1 /* 9 vars */) = 0',
    open(300, '/proc/self/fd'),
    open(300, '/proc/1/stat'),
    ...(extra.fake ?? []),
    `200 ${FORK.replace('%', '400')}`,
    '400 execve("/usr/bin/ps", ["ps", "-A", "-o", "pid="], 0x1 /* 9 vars */) = 0',
    open(400, '/proc/1/stat'),
    open(400, '/proc/200/environ'),
  ].join('\n');
}

const judge = (text: string): ReturnType<typeof judgeTrace> => judgeTrace(parseStrace(text), RULES);

test("Node's own reads at its start are allowed; the fake CLI's and ps's reads are not the product's", () => {
  const verdict = judge(trace());
  assert.deepEqual(verdict.violations, []);
  assert.equal(verdict.rootPid, 100);
  assert.deepEqual(
    verdict.products.map((p) => p.pid),
    [100, 200],
  );
  assert.deepEqual(verdict.unattributed, []);
  assert.equal(verdict.nodeReads.get('/proc/self/cgroup'), 2);
  assert.equal(verdict.nodeReads.get('/proc/self/exe'), 1);
});

test('each forbidden use in a server, supervisor or server thread is one violation naming its rule', () => {
  const cases: readonly [string, string][] = [
    [open(200, '/proc/300/stat'), "another process's /proc/<pid>"],
    [open(200, '/proc/300/exe'), "another process's /proc/<pid>"],
    [open(200, '/proc/self/fd'), '/proc/self/fd'],
    [open(100, '/proc/self/fd/3'), '/proc/self/fd'],
    [open(200, '/proc/self/fdinfo/3'), '/proc/self/fdinfo'],
    [open(100, '/proc/thread-self/fd'), '/proc/thread-self/fd'],
    [open(100, '/proc/self/mountinfo'), '/proc/self/mountinfo'],
    [open(100, '/proc/self/environ'), '/proc/self/environ'],
    [open(100, '/proc/self/task'), '/proc/self/task'],
    [open(100, '/proc/100/stat'), '/proc/<own pid>/stat'],
    [open(200, '/proc/200/stat'), '/proc/<own pid>/stat'],
    [open(200, '/proc/100/stat'), "another process's /proc/<pid>"],
    ['100 readlink("/proc/self/ns/pid", "pid:[1]", 4096) = 16', '/proc/self/ns'],
    [open(100, '/proc/sys/kernel/ns_last_pid'), '/proc/sys/kernel/ns_last_pid'],
    [open(200, '/proc'), 'the /proc listing'],
    ['200 mkdir("/sys/fs/cgroup/unified/x", 0777) = 0', 'a cgroup file'],
    ['200 openat(18</sys/fs/cgroup/unified>, "cgroup.procs", O_WRONLY) = 19', 'a cgroup file'],
    ['100 symlinkat("/proc/300/fd/3", AT_FDCWD</tmp>, "exe") = 0', "another process's /proc/<pid>"],
    ['100 access("../../proc/300/stat", F_OK) = 0', "another process's /proc/<pid>"],
    ['200 openat(9, "stat", O_RDONLY) = 19', 'a relative path whose directory the trace does not name'],
    // Made after the script was loaded, so it is not Node's start: the product's own read of the same file.
    [open(200, '/proc/self/cgroup'), '/proc/self/cgroup'],
  ];
  for (const [line, rule] of cases) {
    const verdict = judge(trace(line.startsWith('100 ') ? { server: [line] } : { supervisor: [line] }));
    assert.deepEqual(
      verdict.violations.map((v) => v.rule),
      [rule],
      line,
    );
  }
  // A thread the server cloned is the server.
  const threaded = judge(trace({ thread: [open(101, '/proc/200/stat')] }));
  assert.deepEqual(
    threaded.violations.map((v) => [v.pid, v.tid, v.rule]),
    [[100, 101, "another process's /proc/<pid>"]],
  );
});

test("a forked child runs its parent's program until it execs: its accesses before are the product's", () => {
  const verdict = judge(trace({ server: [`100 ${FORK.replace('%', '150')}`, open(150, '/proc/self/fd')] }));
  assert.deepEqual(
    verdict.violations.map((v) => [v.pid, v.rule]),
    [[150, '/proc/self/fd']],
  );
});

test('an allowed read is allowed only as listed: its call, its path, and before any script ran', () => {
  const readMaps = '100 readlink("/proc/self/maps", "x", 10) = 1';
  const verdict = judge(trace({ server: [readMaps, open(100, '/proc/meminfo'), open(100, '/sys/fs/cgroup/memory.max.bak')] }));
  assert.deepEqual(
    verdict.violations.map((v) => [v.syscall, v.path]),
    [
      ['readlink', '/proc/self/maps'],
      ['openat', '/proc/meminfo'],
      ['openat', '/sys/fs/cgroup/memory.max.bak'],
    ],
  );
  for (const read of NODE_OWN_READS) assert.ok(read.why.length > 20, `${String(read.path)} says why`);
  // glibc's malloc reads this one whenever it first shrinks an arena: at any time, but only by open.
  const libc = judge(
    trace({ supervisor: [open(200, '/proc/sys/vm/overcommit_memory'), '200 access("/proc/sys/vm/overcommit_memory", R_OK) = 0'] }),
  );
  assert.deepEqual(
    libc.violations.map((v) => [v.syscall, v.rule]),
    [['access', '/proc/sys']],
  );
});

test('the preload may reach only the server; a supervisor or the fake CLI opening it is a violation', () => {
  const verdict = judge(trace({ supervisor: [open(200, '/f/platform-preload.cjs')], fake: [open(300, '/f/platform-preload.cjs')] }));
  assert.deepEqual(
    verdict.violations.map((v) => [v.pid, v.rule]),
    [
      [200, 'the platform preload opened outside the server'],
      [300, 'the platform preload opened outside the server'],
    ],
  );
});

test('a thread with no clone seen for it is reported as unattributed, never silently judged as nobody', () => {
  const verdict = judge(`${trace()}\n${open(999, '/proc/1/stat')}`);
  assert.deepEqual(verdict.unattributed, [999]);
});

test('an execve whose argv strace cut is reported unread: whether it runs the product cannot be told', () => {
  const cut = '200 execve("/usr/bin/node", ["/usr/bin/node", "/b/bund"...], 0x1 /* 9 vars */) = 0';
  const verdict = judge(trace({ supervisor: [`200 ${FORK.replace('%', '250')}`, cut.replace(/^200/, '250')] }));
  assert.deepEqual(
    verdict.unread.map((u) => u.text),
    ['execve: its argv was not printed whole'],
  );
});

test('forbiddenRule: what lies outside /proc and /sys is allowed, /dev/fd included', () => {
  assert.equal(forbiddenRule('/tmp/proc/1/stat', 5, 5), null);
  assert.equal(forbiddenRule('/dev/fd/3', 5, 5), null);
  assert.equal(forbiddenRule('/procx', 5, 5), null);
  assert.equal(forbiddenRule('/proc/5/task/6/children', 5, 6), '/proc/<own pid>/task');
  assert.equal(forbiddenRule('/proc/6/stat', 5, 6), '/proc/<own pid>/stat', 'its own thread id is its own');
  assert.equal(forbiddenRule('/proc/uptime', 5, 5), '/proc/uptime');
  assert.equal(forbiddenRule('/sys/devices/system/cpu/online', 5, 5), 'a /sys file');
});

test('describeViolations groups by process role, call, path shape and rule, with the count and the first line', () => {
  const verdict = judge(
    trace({ supervisor: [open(200, '/proc/300/stat'), open(200, '/proc/301/stat')], server: [open(100, '/proc/self/fd')] }),
  );
  assert.equal(
    describeViolations(verdict),
    [
      '1 × server: openat /proc/self/fd (/proc/self/fd), first at trace line 10',
      "2 × supervisor: openat /proc/<n>/stat (another process's /proc/<pid>), first at trace line 15",
    ].join('\n'),
  );
});
