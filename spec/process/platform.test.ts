/** Pure platform decision: Linux and darwin pass, win32 and every other platform are refused with one stable code. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decidePlatform,
  hostPlatform,
  PLATFORM_UNSUPPORTED,
  PlatformUnsupported,
  platformRefusalLine,
} from '../../lib/process/platform.ts';

test('linux and darwin are decided, everything else is refused', () => {
  assert.deepEqual(decidePlatform('linux'), { kind: 'linux' });
  assert.deepEqual(decidePlatform('darwin'), { kind: 'darwin' });
  for (const platform of ['win32', 'freebsd', 'openbsd', 'aix', 'sunos', 'android', 'cygwin', 'netbsd', 'haiku', '']) {
    const decision = decidePlatform(platform);
    assert.equal(decision.kind, 'refused', platform);
    if (decision.kind === 'refused') assert.equal(decision.platform, platform);
  }
});

test('the refusal names what works: WSL2 on Windows, Linux elsewhere', () => {
  const windows = decidePlatform('win32');
  assert.ok(windows.kind === 'refused');
  assert.match(windows.message, /Windows \(win32\)/);
  assert.match(windows.message, /WSL2/);
  const freebsd = decidePlatform('freebsd');
  assert.ok(freebsd.kind === 'refused');
  assert.match(freebsd.message, /does not run on freebsd: it runs on Linux/);
});

test('a platform name is bounded in the message', () => {
  const long = decidePlatform('x'.repeat(100));
  assert.ok(long.kind === 'refused');
  assert.equal(long.platform, `${'x'.repeat(32)}…`);
  assert.ok(!long.message.includes('x'.repeat(33)));
});

test('the CLI line is one JSON object under error with the stable code', () => {
  const refused = decidePlatform('win32');
  assert.ok(refused.kind === 'refused');
  const line = platformRefusalLine(refused);
  assert.ok(!line.includes('\n'));
  assert.deepEqual(JSON.parse(line), { error: { code: 'platform_unsupported', message: refused.message, platform: 'win32' } });
});

test('the library error carries the code and the platform', () => {
  const refused = decidePlatform('aix');
  assert.ok(refused.kind === 'refused');
  const error = new PlatformUnsupported(refused);
  assert.ok(error instanceof Error);
  assert.equal(error.code, PLATFORM_UNSUPPORTED);
  assert.equal(error.code, 'platform_unsupported');
  assert.equal(error.platform, 'aix');
  assert.equal(error.name, 'PlatformUnsupported');
  assert.equal(error.message, refused.message);
});

test('this process is decided once, as linux', () => {
  assert.deepEqual(hostPlatform(), { kind: 'linux' });
  assert.equal(hostPlatform(), hostPlatform());
});
