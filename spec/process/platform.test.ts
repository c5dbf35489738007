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
import { psFailure } from '../../lib/process/ps-table.ts';

/** What the probe says where the platform's ps does not answer as expected. */
const NO_PS = (): ReturnType<typeof psFailure> => psFailure('ps_not_found', 'not found on PATH');

test('linux and darwin are decided; win32 is refused, and every other platform whose ps does not answer', () => {
  assert.deepEqual(decidePlatform('linux', NO_PS), { kind: 'linux' });
  assert.deepEqual(decidePlatform('darwin', NO_PS), { kind: 'darwin' });
  for (const platform of ['win32', 'freebsd', 'openbsd', 'aix', 'sunos', 'android', 'cygwin', 'netbsd', 'haiku', '']) {
    const decision = decidePlatform(platform, NO_PS);
    assert.equal(decision.kind, 'refused', platform);
    if (decision.kind === 'refused') assert.equal(decision.platform, platform);
  }
});

test('any other platform runs the portable path where its ps answers in the expected form; the probe is not asked for the known ones', () => {
  for (const platform of ['freebsd', 'openbsd', 'aix', 'sunos'])
    assert.deepEqual(
      decidePlatform(platform, () => null),
      { kind: 'darwin' },
    );
  const asked: string[] = [];
  for (const platform of ['linux', 'darwin', 'win32'])
    decidePlatform(platform, () => {
      asked.push(platform);
      return null;
    });
  assert.deepEqual(asked, []);
  assert.equal(decidePlatform('win32', () => null).kind, 'refused');
});

test('the refusal names what works: WSL2 on Windows, Linux elsewhere, and why ps does not do', () => {
  const windows = decidePlatform('win32', NO_PS);
  assert.ok(windows.kind === 'refused');
  assert.match(windows.message, /Windows \(win32\)/);
  assert.match(windows.message, /WSL2/);
  const freebsd = decidePlatform('freebsd', NO_PS);
  assert.ok(freebsd.kind === 'refused');
  assert.match(freebsd.message, /does not run on freebsd: it runs on Linux/);
  assert.match(freebsd.message, /ps: not found on PATH, ps_not_found/);
});

test('a platform name is bounded in the message', () => {
  const long = decidePlatform('x'.repeat(100), NO_PS);
  assert.ok(long.kind === 'refused');
  assert.equal(long.platform, `${'x'.repeat(32)}…`);
  assert.ok(!long.message.includes('x'.repeat(33)));
});

test('the CLI line is one JSON object under error with the stable code', () => {
  const refused = decidePlatform('win32', NO_PS);
  assert.ok(refused.kind === 'refused');
  const line = platformRefusalLine(refused);
  assert.ok(!line.includes('\n'));
  assert.deepEqual(JSON.parse(line), { error: { code: 'platform_unsupported', message: refused.message, platform: 'win32' } });
});

test('the library error carries the code and the platform', () => {
  const refused = decidePlatform('aix', NO_PS);
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
