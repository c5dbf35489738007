/** Pure pieces of the supervisor protocol: control/report validation, bounded report, stderr tail, fd flags. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseControlLine } from '../../lib/supervisor/child/control.ts';
import { formatCleanupLine, REPORT_RESERVED_BYTES } from '../../lib/supervisor/child/cleanup-report.ts';
import { createByteTail } from '../../lib/supervisor/child/stderr-tail.ts';
import { isCloseOnExec, isPortablyInherited } from '../../lib/supervisor/child/fds.ts';
import { formatProbeResult, parseReportLine } from '../../lib/supervisor/report-parse.ts';
import { getSupervisorCommand, SUPERVISOR_ARGV_FLAG } from '../../lib/supervisor/parent/supervisor-command.ts';
import {
  parsePlatformArg,
  platformArg,
  PROBE_LINE_MAX_BYTES,
  PROBE_STDERR_MAX_BYTES,
  PROBE_STDOUT_MAX_BYTES,
  REPORT_MAX_BYTES,
  type ProbeOutcome,
  type RawProbeOutcome,
} from '../../lib/supervisor/protocol.ts';

const MARKER = '0123456789abcdef'.repeat(2);
const spawnLine = {
  type: 'spawn',
  marker: MARKER,
  cgroup: null,
  cgroupRequired: false,
  file: '/bin/x',
  args: ['-p'],
  cwd: '/',
  env: { A: 'b' },
  stdin: null,
  keepStdinOpen: false,
  interruptGraceMs: 1,
  termGraceMs: 0,
  killGraceMs: 0,
  trackIntervalMs: 1,
  expectFileId: null,
  expectImageId: null,
};

test('parseControlLine accepts spawn and terminate, rejects anything off-shape', () => {
  assert.deepEqual(parseControlLine(JSON.stringify(spawnLine)), spawnLine);
  assert.deepEqual(parseControlLine('{"type":"terminate","reason":"cancel"}'), { type: 'terminate', reason: 'cancel' });
  const bad = [
    'not json',
    '[]',
    '{"type":"terminate","reason":"whim"}',
    '{"type":"other"}',
    { ...spawnLine, args: [1] },
    { ...spawnLine, env: { A: 1 } },
    { ...spawnLine, stdin: 3 },
    { ...spawnLine, file: '' },
    { ...spawnLine, trackIntervalMs: 0 },
    { ...spawnLine, termGraceMs: -1 },
    { ...spawnLine, killGraceMs: 1.5 },
    { ...spawnLine, interruptGraceMs: 600_001 },
    { ...spawnLine, marker: undefined },
    { ...spawnLine, marker: MARKER.toUpperCase() },
    { ...spawnLine, marker: `${MARKER}0` },
    { ...spawnLine, marker: 'x'.repeat(32) },
    { ...spawnLine, expectFileId: '' },
    { ...spawnLine, expectFileId: '1:2:3:4' },
    { ...spawnLine, expectFileId: 12345 },
    { ...spawnLine, cgroup: 'relative/dir' },
    { ...spawnLine, cgroup: '/sys/fs/cgroup/../etc' },
    { ...spawnLine, cgroup: 7 },
    // A required cgroup needs a base, and is a boolean.
    { ...spawnLine, cgroupRequired: true },
    { ...spawnLine, cgroup: '/sys/fs/cgroup/user.slice', cgroupRequired: 'yes' },
    { ...spawnLine, expectImageId: '' },
    { ...spawnLine, expectImageId: '1:2:3:4' },
    { ...spawnLine, expectImageId: 12345 },
    // An open stdin needs a first write, and is a boolean.
    { ...spawnLine, keepStdinOpen: true },
    { ...spawnLine, stdin: 'x', keepStdinOpen: 'yes' },
    // Native input: a string, or the bare end.
    '{"type":"input"}',
    '{"type":"input","data":7}',
    '{"type":"input_end","data":"x"}',
  ];
  for (const b of bad) assert.equal(parseControlLine(typeof b === 'string' ? b : JSON.stringify(b)), null, JSON.stringify(b));
  assert.notEqual(parseControlLine(JSON.stringify({ ...spawnLine, interruptGraceMs: 600_000 })), null);
  assert.deepEqual(
    parseControlLine(JSON.stringify({ ...spawnLine, expectFileId: '64769:1234:99:1700000000000000000:1700000000000000001' }))?.type,
    'spawn',
  );
  assert.deepEqual(parseControlLine('{"type":"input","data":"{\\"type\\":\\"user\\"}\\n"}'), { type: 'input', data: '{"type":"user"}\n' });
  assert.deepEqual(parseControlLine('{"type":"input_end"}'), { type: 'input_end' });
  assert.deepEqual(parseControlLine(JSON.stringify({ ...spawnLine, stdin: 'x', keepStdinOpen: true })), {
    ...spawnLine,
    stdin: 'x',
    keepStdinOpen: true,
  });
  // Absent keepStdinOpen (an older server) closes stdin after its first write.
  assert.deepEqual(parseControlLine(JSON.stringify({ ...spawnLine, keepStdinOpen: undefined })), spawnLine);
  // Absent (a server older than the supervisor file it started) is unbound, not malformed.
  assert.deepEqual(parseControlLine(JSON.stringify({ ...spawnLine, expectFileId: undefined, expectImageId: undefined })), spawnLine);
  assert.deepEqual(parseControlLine(JSON.stringify({ ...spawnLine, expectImageId: '1:2:3:4:5' })), {
    ...spawnLine,
    expectImageId: '1:2:3:4:5',
  });
  // The same for the cgroup base: absent means /proc tracking; an absolute base is taken as given.
  assert.deepEqual(parseControlLine(JSON.stringify({ ...spawnLine, cgroup: undefined })), spawnLine);
  assert.deepEqual(parseControlLine(JSON.stringify({ ...spawnLine, cgroup: '/sys/fs/cgroup/user.slice' }))?.type, 'spawn');
  // Absent cgroupRequired (an older server) is not required; true with a base is taken.
  assert.deepEqual(parseControlLine(JSON.stringify({ ...spawnLine, cgroupRequired: undefined })), spawnLine);
  const required = { ...spawnLine, cgroup: '/sys/fs/cgroup/user.slice', cgroupRequired: true };
  assert.deepEqual(parseControlLine(JSON.stringify(required)), required);
});

const probeLine = {
  type: 'probe',
  id: 0,
  marker: MARKER,
  cgroup: null,
  cgroupRequired: false,
  file: '/bin/x',
  args: ['--version'],
  cwd: '/',
  env: { A: 'b' },
  timeoutMs: 10_000,
  maxStdoutBytes: 4096,
};

test('parseControlLine accepts a probe with its bounds and rejects one off-shape', () => {
  assert.deepEqual(parseControlLine(JSON.stringify(probeLine)), probeLine);
  const bad = [
    { ...probeLine, id: -1 },
    { ...probeLine, id: 1.5 },
    { ...probeLine, timeoutMs: 0 },
    { ...probeLine, timeoutMs: 600_001 },
    { ...probeLine, maxStdoutBytes: -1 },
    { ...probeLine, marker: 'short' },
    { ...probeLine, args: 'x' },
    { ...probeLine, cwd: '' },
  ];
  for (const b of bad) assert.equal(parseControlLine(JSON.stringify(b)), null, JSON.stringify(b));
  assert.notEqual(parseControlLine(JSON.stringify({ ...probeLine, timeoutMs: 600_000 })), null);
});

test('probe results survive the wire whatever bytes they carry (base64 on the pipe)', () => {
  const outcomes: ProbeOutcome[] = [
    { kind: 'exited', code: 0, signal: null, stdout: '2.1.332 (Claude Code)\n\u0000\u001f"\\', stdoutOverflow: false, stderr: 'é' },
    { kind: 'exited', code: null, signal: 'SIGKILL', stdout: '', stdoutOverflow: true, stderr: '' },
    { kind: 'timeout' },
    { kind: 'cancelled' },
    { kind: 'spawn_error', message: 'ENOENT' },
  ];
  const raw = (o: ProbeOutcome): RawProbeOutcome =>
    o.kind === 'exited' ? { ...o, stdout: Buffer.from(o.stdout, 'utf8'), stderr: Buffer.from(o.stderr, 'utf8') } : o;
  for (const outcome of outcomes) {
    const line = formatProbeResult(7, raw(outcome), null, null);
    assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'));
    assert.deepEqual(parseReportLine(line.trimEnd()), { type: 'probe_result', id: 7, outcome, fileId: null, imageId: null });
  }
  const bound = formatProbeResult(8, { kind: 'timeout' }, '1:2:3:4:5', '6:7:8:9:10').trimEnd();
  assert.deepEqual(parseReportLine(bound), {
    type: 'probe_result',
    id: 8,
    outcome: { kind: 'timeout' },
    fileId: '1:2:3:4:5',
    imageId: '6:7:8:9:10',
  });
  assert.equal(parseReportLine(bound.replace('"6:7:8:9:10"', '"6:7"')), null, 'a malformed image id');
  // Absent (an older supervisor file): the answer vouches for no file and no image.
  assert.deepEqual(parseReportLine(bound.replace(',"image_id":"6:7:8:9:10"', '')), {
    type: 'probe_result',
    id: 8,
    outcome: { kind: 'timeout' },
    fileId: '1:2:3:4:5',
    imageId: null,
  });
  assert.equal(
    parseReportLine(
      '{"type":"probe_result","id":1,"kind":"exited","code":0,"signal":null,"stdout_overflow":false,"stdout_b64":1,"stderr_b64":""}',
    ),
    null,
  );
  assert.equal(parseReportLine('{"type":"probe_result","id":1,"kind":"whatever"}'), null);
});

/** Five unsigned 64-bit numbers: the longest identity the kernel can give. */
const LONGEST_ID = Array.from({ length: 5 }, () => String(2n ** 64n - 1n)).join(':');

test('a probe result line at the largest outputs stays within its bound, whatever the bytes (invalid UTF-8 too)', () => {
  const line = formatProbeResult(
    Number.MAX_SAFE_INTEGER,
    {
      kind: 'exited',
      code: 255,
      signal: null,
      stdout: Buffer.alloc(PROBE_STDOUT_MAX_BYTES, 0xff),
      stdoutOverflow: true,
      stderr: Buffer.alloc(PROBE_STDERR_MAX_BYTES, 0xff),
    },
    LONGEST_ID,
    LONGEST_ID,
  );
  assert.ok(Buffer.byteLength(line) <= PROBE_LINE_MAX_BYTES, `${Buffer.byteLength(line)} bytes`);
  const parsed = parseReportLine(line.trimEnd());
  assert.ok(parsed?.type === 'probe_result' && parsed.outcome.kind === 'exited');
  assert.equal(parsed.outcome.stdout, '\ufffd'.repeat(PROBE_STDOUT_MAX_BYTES), 'decoded on the adapter side only');
});

const facts = { survivors: [], steps: ['native_exit'], error: null, stderrTail: 'tail', stderrBytes: 4, proof: 'cgroup' as const };

test('formatCleanupLine: confirmed only without survivors and without error', () => {
  assert.equal(JSON.parse(formatCleanupLine(facts)).confirmed, true);
  assert.equal(JSON.parse(formatCleanupLine({ ...facts, survivors: [{ pid: 5, start: '1' }] })).confirmed, false);
  assert.equal(JSON.parse(formatCleanupLine({ ...facts, error: 'EPERM' })).confirmed, false);
});

test('formatCleanupLine fits its budget exactly at the bound and shrinks one past it', () => {
  const exact = formatCleanupLine(facts);
  const budget = Buffer.byteLength(exact);
  assert.equal(formatCleanupLine(facts, budget), exact);
  const shrunk = JSON.parse(formatCleanupLine(facts, budget - 1));
  assert.equal(shrunk.stderr_tail, 'ail');
  // Worst case: control characters (6 bytes each escaped) and thousands of survivors.
  const survivors = Array.from({ length: 5000 }, (_, i) => ({ pid: i + 2, start: '123456789' }));
  const line = formatCleanupLine({ ...facts, survivors, stderrTail: '\u0001'.repeat(16 * 1024) });
  assert.ok(Buffer.byteLength(line) <= REPORT_MAX_BYTES - REPORT_RESERVED_BYTES);
  const parsed = JSON.parse(line);
  assert.equal(parsed.survivors.length + parsed.survivors_omitted, 5000);
  assert.equal(parsed.confirmed, false);
});

test('byte tail keeps exactly maxBytes: at the bound whole, one past drops the oldest byte', () => {
  const at = createByteTail(8);
  at.push(Buffer.from('abcd'));
  at.push(Buffer.from('efgh'));
  assert.equal(at.text(), 'abcdefgh');
  at.push(Buffer.from('i'));
  assert.equal(at.text(), 'bcdefghi');
  assert.equal(at.totalBytes(), 9);
  const big = createByteTail(4);
  big.push(Buffer.from('0123456789'));
  assert.equal(big.text(), '6789');
});

test('byte tail never starts with half a UTF-8 character', () => {
  const cut = createByteTail(3);
  cut.push(Buffer.from('a✓b')); // ✓ is e2 9c 93: the last 3 bytes are 9c 93 62
  assert.equal(cut.text(), 'b');
  const whole = createByteTail(4);
  whole.push(Buffer.from('a✓b'));
  assert.equal(whole.text(), '✓b');
});

test('isCloseOnExec reads the octal flags line of /proc/<pid>/fdinfo', () => {
  assert.equal(isCloseOnExec('pos:\t0\nflags:\t02100002\nmnt_id:\t1\n'), true);
  assert.equal(isCloseOnExec('pos:\t0\nflags:\t01\nmnt_id:\t1\n'), false);
  assert.equal(isCloseOnExec('no flags here'), true);
});

test('parseReportLine validates every message and distrusts a contradictory "confirmed"', () => {
  // No version_proof (an older supervisor): the weakest word, never more.
  assert.deepEqual(parseReportLine('{"type":"spawned","pid":5,"start":"9","pgid":4}'), {
    type: 'spawned',
    pid: 5,
    start: '9',
    pgid: 4,
    version_proof: 'path',
  });
  for (const proof of ['image', 'file', 'path'] as const)
    assert.equal(
      (parseReportLine(`{"type":"spawned","pid":5,"start":"9","pgid":4,"version_proof":"${proof}"}`) as { version_proof?: string } | null)
        ?.version_proof,
      proof,
    );
  assert.equal(parseReportLine('{"type":"spawned","pid":5,"start":"9","pgid":4,"version_proof":"kernel"}'), null);
  assert.deepEqual(parseReportLine('{"type":"exit","code":null,"signal":"SIGKILL"}'), { type: 'exit', code: null, signal: 'SIGKILL' });
  assert.equal(parseReportLine('{"type":"exit","code":"1","signal":null}'), null);
  assert.equal(parseReportLine('{"type":"spawned","pid":5}'), null);
  assert.equal(parseReportLine('nope'), null);
  const cleanup = {
    type: 'cleanup',
    confirmed: true,
    survivors: [{ pid: 3, start: '1' }],
    survivors_omitted: 0,
    steps: [],
    error: null,
    stderr_tail: '',
    stderr_bytes: 0,
  };
  const confirmedOf = (line: string): boolean | undefined => {
    const m = parseReportLine(line);
    return m?.type === 'cleanup' ? m.confirmed : undefined;
  };
  assert.equal(confirmedOf(JSON.stringify(cleanup)), false);
  assert.equal(confirmedOf(JSON.stringify({ ...cleanup, survivors: [] })), true);
  assert.equal(parseReportLine(JSON.stringify({ ...cleanup, survivors: [{ pid: '3' }] })), null);
});

test('getSupervisorCommand: tsx + main.ts from source, the bundle with its dispatch flag when bundled', () => {
  const source = getSupervisorCommand('file:///repo/lib/supervisor/parent/supervisor-command.ts');
  assert.equal(source.file, process.execPath);
  assert.equal(source.args[0], '--import');
  assert.match(source.args[1] ?? '', /^file:.*tsx/);
  assert.equal(source.args[2], '/repo/lib/supervisor/child/main.ts');
  assert.deepEqual(getSupervisorCommand('file:///opt/dist/claude-run-mcp.cjs'), {
    file: process.execPath,
    args: ['/opt/dist/claude-run-mcp.cjs', SUPERVISOR_ARGV_FLAG],
  });
});

test('the platform argument: one --platform= of a supported platform, else null (the supervisor then starts nothing)', () => {
  assert.equal(platformArg('darwin'), '--platform=darwin');
  assert.equal(parsePlatformArg(['__supervisor', platformArg('darwin')]), 'darwin');
  assert.equal(parsePlatformArg([platformArg('linux')]), 'linux');
  assert.equal(parsePlatformArg([]), null);
  assert.equal(parsePlatformArg(['--platform=win32']), null);
  assert.equal(parsePlatformArg(['--platform=']), null);
  assert.equal(parsePlatformArg(['--platform=linux', '--platform=linux']), null, 'twice is refused, even when equal');
  assert.equal(parsePlatformArg(['--platform', 'linux']), null, 'only the = form');
});

test('isPortablyInherited: files, directories and devices other than /dev/null are closed; pipes, sockets and typeless fds stay', () => {
  const kind = (k: string, dev = 1, ino = 2) => ({
    isFile: () => k === 'file',
    isDirectory: () => k === 'dir',
    isBlockDevice: () => k === 'block',
    isCharacterDevice: () => k === 'char',
    dev,
    ino,
  });
  const devNull = { dev: 6, ino: 3 };
  for (const k of ['file', 'dir', 'block', 'char']) assert.equal(isPortablyInherited(kind(k), devNull), true, k);
  assert.equal(isPortablyInherited(kind('char', 6, 3), devNull), false, "Node's own /dev/null");
  assert.equal(isPortablyInherited(kind('char', 6, 3), null), true, 'no /dev/null known: every device');
  for (const k of ['fifo', 'socket', 'anon']) assert.equal(isPortablyInherited(kind(k), devNull), false, k);
});
