import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeLostSupervisor, MAX_LAST_WORDS_CHARS } from '../../lib/runs/run-finish.ts';
import type { SupervisedOutcome } from '../../lib/supervisor/parent/run-supervised.ts';

const lost = (crashText: string | null): SupervisedOutcome => ({
  spawned: null,
  versionProof: null,
  spawnError: null,
  exit: null,
  cleanup: null,
  supervisorExit: { code: 1, signal: null },
  stderrTail: '',
  stderrBytes: 0,
  fallbackKilled: 2,
  fallbackLeft: 0,
  fallbackError: null,
  fallbackProof: null,
  fallbackSource: 'process_scan',
  crashText,
});

test('a lost supervisor: how it ended and what the adapter did; its crash named by the error line, cut at the bound', () => {
  assert.equal(
    describeLostSupervisor(lost(null)),
    'the supervisor ended (exit code 1) without a cleanup report; the adapter killed 2 leftover process(es) but cannot prove nothing survived',
  );
  const stack = '/x/bundle.cjs:10\n  throw e;\n  ^\n\nTypeError: Cannot read properties of null\n    at f (/x/bundle.cjs:10:3)\n';
  assert.match(describeLostSupervisor(lost(stack)), /; it wrote: TypeError: Cannot read properties of null$/);
  assert.match(describeLostSupervisor(lost('no error line here\nlast words\n')), /; it wrote: last words$/);
  const long = `Error: ${'y'.repeat(MAX_LAST_WORDS_CHARS * 2)}`;
  assert.ok(describeLostSupervisor(lost(long)).endsWith(`; it wrote: ${long.slice(0, MAX_LAST_WORDS_CHARS)}`));
});

test('a lost supervisor on darwin: the processes seen and left alone are counted, a failed ps is named', () => {
  assert.match(
    describeLostSupervisor({ ...lost(null), fallbackKilled: 1, fallbackLeft: 3 }),
    /killed 1 leftover process\(es\) but cannot prove nothing survived; 3 other process\(es\) of the run were seen and left alone/,
  );
  assert.match(
    describeLostSupervisor({ ...lost(null), fallbackError: 'ps: not found on PATH' }),
    /\(it could not look: ps: not found on PATH\)$/,
  );
});
