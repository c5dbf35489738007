// Where the package says it runs: npm's `os`, the .mcpb manifest's platforms and server.json agree with the
// platform decision (lib/process/platform.ts): Linux and macOS; Windows refused (docs/platforms.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../scripts/build.ts';
import { decidePlatform, SUPPORTED_PLATFORMS } from '../../lib/process/platform.ts';

const json = (file: string): Record<string, unknown> => JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as Record<string, unknown>;
const SUPPORTED = ['linux', 'darwin'];

test('package.json os and the .mcpb manifest list exactly the platforms a start accepts', () => {
  assert.deepEqual(json('package.json')['os'], SUPPORTED);
  const compatibility = json('manifest.json')['compatibility'] as Record<string, unknown>;
  assert.deepEqual(compatibility['platforms'], SUPPORTED);
  assert.deepEqual([...SUPPORTED_PLATFORMS], SUPPORTED);
  for (const platform of SUPPORTED) assert.equal(decidePlatform(platform, () => null).kind, platform);
  assert.equal(decidePlatform('win32', () => null).kind, 'refused');
});

test('server.json claims no platform of its own (its schema has no such field) and names none it leaves out', () => {
  const text = readFileSync(join(ROOT, 'server.json'), 'utf8');
  assert.doesNotMatch(text, /linux only|only on linux|"platforms?"|"os"/i);
});
