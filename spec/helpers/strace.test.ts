import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseStrace, readFd, readString, readStringArray, resultNumber, splitArgs } from './strace.ts';

// Lines as strace 6.1 prints them with -f -y -s 4096 (taken from a real trace of the server, shortened).
const WHOLE = [
  '100 execve("/usr/bin/node", ["/usr/bin/node", "/b/bundle.cjs", "__supervisor"], 0x396b0bd0 /* 41 vars */) = 0',
  '100 openat(AT_FDCWD</tmp/w>, "/proc/self/cgroup", O_RDONLY|O_CLOEXEC) = 17</proc/100/cgroup>',
  '100 readlink("/proc/self/ns/pid", "pid:[4026531836]", 4096) = 16',
  '100 +++ exited with 0 +++',
].join('\n');

test('a whole line is one call: thread id, name, arguments split at top-level commas, result', () => {
  const { calls, unread } = parseStrace(WHOLE);
  assert.deepEqual(unread, []);
  assert.equal(calls.length, 3);
  assert.deepEqual(calls[0], {
    line: 1,
    tid: 100,
    name: 'execve',
    args: ['"/usr/bin/node"', '["/usr/bin/node", "/b/bundle.cjs", "__supervisor"]', '0x396b0bd0 /* 41 vars */'],
    result: '0',
  });
  assert.deepEqual(calls[1]?.args, ['AT_FDCWD</tmp/w>', '"/proc/self/cgroup"', 'O_RDONLY|O_CLOEXEC']);
  assert.equal(calls[1]?.result, '17</proc/100/cgroup>');
  assert.equal(calls[2]?.result, '16');
});

test('a call split by another thread is joined, in the order of its entry line', () => {
  const text = [
    '100 readlink("/etc",  <unfinished ...>',
    '101 openat(AT_FDCWD</tmp>, "/lib/libm.so.6", O_RDONLY <unfinished ...>',
    '100 <... readlink resumed>0x7ffe20e51540, 1023) = -1 EINVAL (Invalid argument)',
    '101 <... openat resumed>)             = 3</usr/lib/libm.so.6>',
  ].join('\n');
  const { calls, unread } = parseStrace(text);
  assert.deepEqual(unread, []);
  assert.deepEqual(
    calls.map((c) => [c.line, c.tid, c.name, c.args, c.result]),
    [
      [1, 100, 'readlink', ['"/etc"', '0x7ffe20e51540', '1023'], '-1 EINVAL (Invalid argument)'],
      [2, 101, 'openat', ['AT_FDCWD</tmp>', '"/lib/libm.so.6"', 'O_RDONLY'], '3</usr/lib/libm.so.6>'],
    ],
  );
});

test('a call never resumed keeps its arguments with a null result; what cannot be read is returned, not dropped', () => {
  const text = [
    '7 openat(AT_FDCWD</>, "/proc/9/stat", O_RDONLY <unfinished ...>',
    '8 <... openat resumed>) = 3',
    'strace: something odd',
    '9 openat(AT_FDCWD</>, "/x", O_RDONLY',
    '10 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED} ---',
    '11 +++ killed by SIGKILL +++',
  ].join('\n');
  const { calls, unread } = parseStrace(text);
  assert.deepEqual(
    calls.map((c) => [c.tid, c.args[1], c.result]),
    [[7, '"/proc/9/stat"', null]],
  );
  assert.deepEqual(
    unread.map((u) => u.line),
    [2, 3, 4],
  );
});

test('a thread id padded to a column is read the same', () => {
  const { calls, unread } = parseStrace(
    '330   access("/etc/ld.so.preload", R_OK) = -1 ENOENT (No such file or directory)\n331   +++ exited with 0 +++\n',
  );
  assert.deepEqual(unread, []);
  assert.deepEqual(
    calls.map((c) => [c.tid, c.name, c.args[0]]),
    [[330, 'access', '"/etc/ld.so.preload"']],
  );
});

test('strings, fds and arrays are read as strace escapes them; a path with ), "," or > does not split', () => {
  assert.deepEqual(readString('"/a b/\\"q\\"/\\303\\251/\\x41\\n"'), { value: '/a b/"q"/\xc3\xa9/A\n', cut: false });
  assert.deepEqual(readString('"/very/lon"...'), { value: '/very/lon', cut: true });
  assert.equal(readString('O_RDONLY'), null);
  assert.deepEqual(readFd('AT_FDCWD</tmp/a\\76b>'), { fd: 'AT_FDCWD', path: '/tmp/a>b' });
  assert.deepEqual(readFd('18</sys/fs/cgroup/unified>'), { fd: '18', path: '/sys/fs/cgroup/unified' });
  assert.deepEqual(readFd('3'), { fd: '3', path: null });
  assert.equal(readFd('"x"'), null);
  assert.deepEqual(readStringArray('["node", "/a,b)", "c\\"d"]'), ['node', '/a,b)', 'c"d']);
  assert.equal(readStringArray('["node", "/cut"...]'), null, 'a cut element is not read as whole');
  assert.deepEqual(splitArgs('3</a, b>, "x, )", {a=1, b=[2, 3]}, 4'), ['3</a, b>', '"x, )"', '{a=1, b=[2, 3]}', '4']);
  const { calls } = parseStrace('5 openat(AT_FDCWD</d)ir>, "/p) = 3", O_RDONLY) = 3</p) = 3>\n');
  assert.deepEqual(calls[0]?.args, ['AT_FDCWD</d)ir>', '"/p) = 3"', 'O_RDONLY']);
  assert.equal(calls[0]?.result, '3</p) = 3>');
});

test('resultNumber reads a clone pid or execve 0, and nothing from an error, ? or a decorated fd', () => {
  assert.equal(resultNumber('13551'), 13551);
  assert.equal(resultNumber('0'), 0);
  assert.equal(resultNumber('-1 ENOENT (No such file or directory)'), null);
  assert.equal(resultNumber('?'), null);
  assert.equal(resultNumber('3</x>'), null);
  assert.equal(resultNumber(null), null);
});
