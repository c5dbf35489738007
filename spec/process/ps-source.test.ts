/** Pure classification of a failed `ps` run, and the quote of its stderr at its bound. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ExecFileException } from 'node:child_process';
import { classifyPsError, PS_STDERR_QUOTE_CHARS } from '../../lib/process/ps-source.ts';

const BOUNDS = { timeoutMs: 10, maxOutputBytes: 20 };
const error = (fields: Partial<ExecFileException>): ExecFileException => Object.assign(new Error('x'), fields);

test('each execFile error is one code; the bound and the timeout win over the signal they send', () => {
  const cases: readonly (readonly [Partial<ExecFileException>, string])[] = [
    [{ code: 'ENOENT' }, 'ps_not_found'],
    [{ code: 'EACCES' }, 'ps_spawn_failed'],
    [{ code: 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER', killed: true, signal: 'SIGKILL' }, 'ps_output_too_large'],
    [{ killed: true, signal: 'SIGKILL' }, 'ps_timeout'],
    [{ killed: false, signal: 'SIGKILL' }, 'ps_killed'],
    [{ code: 2 }, 'ps_exit_nonzero'],
    [{}, 'ps_spawn_failed'],
  ];
  for (const [fields, code] of cases) {
    const failure = classifyPsError(error(fields), '', BOUNDS);
    assert.equal(failure.code, code, JSON.stringify(fields));
    assert.equal(failure.tool, 'ps');
    assert.match(failure.message, /^ps: /);
  }
  assert.equal(
    classifyPsError(error({ code: 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER' }), '', BOUNDS).message,
    'ps: printed more than 20 bytes (PS_MAX_OUTPUT_BYTES); it was killed',
  );
});

test('a non-zero exit quotes the first line of stderr, up to PS_STDERR_QUOTE_CHARS', () => {
  const at = 'e'.repeat(PS_STDERR_QUOTE_CHARS);
  assert.equal(classifyPsError(error({ code: 1 }), `${at}\nsecond line`, BOUNDS).message, `ps: exited 1: ${at}`);
  assert.equal(classifyPsError(error({ code: 1 }), `${at}f`, BOUNDS).message, `ps: exited 1: ${at}…`);
  assert.equal(classifyPsError(error({ code: 1 }), '', BOUNDS).message, 'ps: exited 1');
});
