import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { HAND_KEPT_MARKER, withHandKeptPart } from '../../scripts/bench/report.ts';

test('the hand-kept part of the previous file follows the generated report, marker included', () => {
  const previous = `# old table\n\nold rows\n\n${HAND_KEPT_MARKER}\n\n## By hand\n\n307 s\n`;
  assert.equal(
    withHandKeptPart('# new table\n\nnew rows\n', previous),
    `# new table\n\nnew rows\n\n${HAND_KEPT_MARKER}\n\n## By hand\n\n307 s\n`,
  );
});

test('without a previous file or its marker the generated report stands alone', () => {
  assert.equal(withHandKeptPart('# new\n', null), '# new\n');
  assert.equal(withHandKeptPart('# new\n', '# old, all generated\n'), '# new\n');
});

test('docs/benchmarks.md carries the marker, so a bench run keeps the suite timings', () => {
  const text = readFileSync(new URL('../../docs/benchmarks.md', import.meta.url), 'utf8');
  const at = text.indexOf(HAND_KEPT_MARKER);
  assert.ok(at > 0, 'the marker is in docs/benchmarks.md');
  assert.ok(text.indexOf('## Test suite timings') > at, 'the suite timings are below the marker');
});
