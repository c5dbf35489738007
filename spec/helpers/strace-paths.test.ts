import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callPaths } from './strace-paths.ts';
import { parseStrace } from './strace.ts';

const pathsOf = (line: string, cwd: string | null = null): ReturnType<typeof callPaths> => {
  const call = parseStrace(`1 ${line}\n`).calls[0];
  if (call === undefined) throw new Error(`not a call: ${line}`);
  return callPaths(call, cwd);
};

test('a *at call names its path against the directory -y printed for its descriptor; AT_FDCWD also sets the cwd', () => {
  assert.deepEqual(pathsOf('openat(18</sys/fs/cgroup/unified>, "cgroup.procs", O_WRONLY) = 19'), {
    paths: ['/sys/fs/cgroup/unified/cgroup.procs'],
    cwd: null,
  });
  assert.deepEqual(pathsOf('openat(AT_FDCWD</w>, "a/../b", O_RDONLY) = 3'), { paths: ['/w/b'], cwd: '/w' });
  assert.deepEqual(pathsOf('newfstatat(AT_FDCWD</w>, "/proc//self/./fd", {st_mode=S_IFDIR}, 0) = 0'), {
    paths: ['/proc/self/fd'],
    cwd: '/w',
  });
});

test('a call without a descriptor resolves a relative path against the known cwd, else says it is unknown', () => {
  assert.deepEqual(pathsOf('access("../proc/1/stat", F_OK) = 0', '/tmp/x').paths, ['/tmp/proc/1/stat']);
  assert.deepEqual(pathsOf('readlink("exe", "x", 10) = 1').paths, ['(unknown directory)/exe']);
  assert.deepEqual(pathsOf('openat(9, "stat", O_RDONLY) = 3').paths, ['(unknown directory)/stat'], 'a bare descriptor names no directory');
});

test('every path argument counts (both names of a rename, a symlink target); output buffers and empty paths do not', () => {
  assert.deepEqual(pathsOf('renameat2(AT_FDCWD</a>, "x", 5</b>, "y", RENAME_NOREPLACE) = 0').paths, ['/a/x', '/b/y']);
  assert.deepEqual(pathsOf('symlinkat("/proc/2/fd/3", AT_FDCWD</t>, "exe") = 0').paths, ['/proc/2/fd/3', '/t/exe']);
  assert.deepEqual(pathsOf('readlink("/proc/self/exe", "/proc/9/x", 8191) = 9').paths, ['/proc/self/exe']);
  assert.deepEqual(pathsOf('getcwd("/proc/1", 4096) = 8').paths, []);
  assert.deepEqual(pathsOf('newfstatat(17</proc/5/maps>, "", {st_mode=S_IFREG}, AT_EMPTY_PATH) = 0').paths, []);
  assert.deepEqual(pathsOf('clone(child_stack=NULL, flags=SIGCHLD) = 7').paths, []);
});
