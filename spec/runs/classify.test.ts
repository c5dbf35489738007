import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyRun, mapNativeError } from '../../lib/runs/classify.ts';
import type { ClassifyInput } from '../../lib/runs/classify.ts';
import { createIngest } from '../../lib/runs/ingest.ts';
import type { IngestState } from '../../lib/runs/ingest.ts';
import type { ToolErrorCode } from '../../lib/tool-errors.ts';
import { ingestCapture, lines } from './capture.ts';
import { at, parseObj } from '../helpers/typed-results.ts';

const GOLDEN_RESULT = parseObj(lines('golden-ok-stream-partial').at(-1) ?? '', 'the golden final event');
const INIT = lines('golden-ok-stream-partial')[0] ?? '';

function fromCapture(name: string, overrides: Partial<ClassifyInput> = {}): ClassifyInput {
  const { ingest, capture } = ingestCapture(name);
  return {
    ingest: ingest.snapshot(),
    exit: { code: capture.rc, signal: null },
    termination: null,
    spawnError: null,
    cleanup: { confirmed: true, error: null, proof: 'process_scan' as const },
    stderrTail: capture.stderr,
    versionProof: 'file',
    session: { kind: 'fresh' },
    continueKnownSessionIds: [],
    ...overrides,
  };
}

function fromFrames(frames: string[], overrides: Partial<ClassifyInput> = {}): ClassifyInput {
  const ingest = createIngest({ ringId: 'r' });
  for (const frame of frames) ingest.onFrame(Buffer.from(frame));
  return {
    ingest: ingest.snapshot(),
    exit: { code: 0, signal: null },
    termination: null,
    spawnError: null,
    cleanup: { confirmed: true, error: null, proof: 'process_scan' as const },
    stderrTail: '',
    versionProof: 'file',
    session: { kind: 'fresh' },
    continueKnownSessionIds: [],
    ...overrides,
  };
}

const result = (extra: Record<string, unknown>): string => JSON.stringify({ ...GOLDEN_RESULT, ...extra });

test('golden success: every figure from the native final event, cost labelled conversation-wide', () => {
  const outcome = classifyRun(fromCapture('golden-ok-stream-partial'));
  assert.equal(outcome.is_error, false);
  assert.equal(outcome.error, null);
  assert.equal(outcome.native_error, null);
  assert.equal(outcome.result, 'Hi! I am a fake Claude.');
  assert.equal(outcome.session_id, '89091831-a95e-44bd-95a5-40cc9d0c6251');
  assert.equal(outcome.model, 'claude-opus-5-5');
  assert.equal(outcome.total_cost_usd, GOLDEN_RESULT['total_cost_usd']);
  assert.equal(outcome.cost_scope, 'conversation');
  assert.deepEqual(outcome.usage, GOLDEN_RESULT['usage']);
  assert.deepEqual(outcome.model_usage_this_call, GOLDEN_RESULT['model_usage_since_last_result']);
  assert.equal(outcome.num_turns, 1);
  assert.equal(outcome.duration_ms, 409);
  assert.deepEqual(outcome.permission_denials, []);
  assert.equal(outcome.exit_code, 0);
  assert.equal(outcome.cleanup_confirmed, true);
  assert.equal(outcome.cleanup_error, null);
  assert.equal(outcome.events_total, 12);
  assert.equal(outcome.resume_requested, false);
  assert.equal(outcome.resumed, false);
});

test('real native failures (API errors, session refusals, signals) map to their own codes', () => {
  const table: Array<[string, ToolErrorCode]> = [
    ['err-r0-http_400', 'api_invalid_request'],
    ['err-r0-http_401', 'authentication_failed'],
    ['err-r0-http_403', 'authentication_failed'],
    ['err-r0-http_404', 'model_not_found'],
    ['err-r0-http_413', 'api_invalid_request'],
    ['err-r0-http_429', 'rate_limited'],
    ['err-r0-http_500', 'api_server_error'],
    ['err-r0-http_529', 'overloaded'],
    ['err-def-http_529', 'overloaded'],
    ['err-r0-sse_error-nofallback', 'overloaded'],
    ['err-r0-connrefused', 'api_server_error'],
    ['err-r0-cut-nofallback', 'api_server_error'],
    ['err-r0-max_tokens', 'output_token_limit'],
    ['opt-max-turns-1', 'max_turns'],
    ['opt-budget', 'budget_exhausted'],
    ['sig-int-stream', 'aborted'],
    ['sig-int-bash', 'aborted'],
    ['sess-04-resume-unknown', 'session_not_found'],
    ['sess-03-session-id-reuse', 'session_id_in_use'],
    ['sig-term-stream', 'missing_final_event'],
  ];
  for (const [name, code] of table) {
    const outcome = classifyRun(fromCapture(name));
    assert.equal(outcome.is_error, true, name);
    assert.equal(outcome.error?.code, code, name);
  }
});

test('native messages are the native words', () => {
  assert.match(classifyRun(fromCapture('err-r0-http_401')).error?.message ?? '', /^Failed to authenticate\. API Error: 401/);
  assert.equal(classifyRun(fromCapture('opt-max-turns-1')).error?.message, 'Reached maximum number of turns (1)');
  assert.equal(
    classifyRun(fromCapture('sess-03-session-id-reuse')).error?.message,
    'Error: Session ID 11111111-2222-4333-8444-555555555555 is already in use.',
  );
  assert.equal(classifyRun(fromCapture('err-def-http_529')).api_retries, 2);
});

test('is_error decides whatever the subtype; an unexplained native failure is native_error', () => {
  const outcome = classifyRun(
    fromFrames([result({ is_error: true, result: 'odd', api_error_status: null, terminal_reason: 'completed' })], {
      exit: { code: 1, signal: null },
    }),
  );
  assert.equal(outcome.error?.code, 'native_error');
  assert.equal(outcome.error?.message, 'odd');
  const nonSuccess = classifyRun(fromFrames([result({ subtype: 'error_during_execution', is_error: false })]));
  assert.equal(nonSuccess.error?.code, 'native_error');
  const unknownStatus = classifyRun(fromFrames([result({ is_error: true, api_error_status: 418, result: '' })]));
  assert.equal(unknownStatus.error?.code, 'native_error');
  assert.equal(unknownStatus.error?.message, 'The native run reported an error (is_error true) that has no more specific code.');
});

test('status and assistant-error mapping tables', () => {
  const status: Array<[number, ToolErrorCode]> = [
    [401, 'authentication_failed'],
    [403, 'authentication_failed'],
    [429, 'rate_limited'],
    [529, 'overloaded'],
    [404, 'model_not_found'],
    [400, 'api_invalid_request'],
    [413, 'api_invalid_request'],
    [500, 'api_server_error'],
    [502, 'api_server_error'],
    [599, 'api_server_error'],
  ];
  for (const [code, expected] of status) {
    assert.equal(classifyRun(fromFrames([result({ is_error: true, api_error_status: code })])).error?.code, expected, String(code));
  }
  const assistant: Array<[string, ToolErrorCode]> = [
    ['authentication_failed', 'authentication_failed'],
    ['rate_limit', 'rate_limited'],
    ['overloaded', 'overloaded'],
    ['server_error', 'api_server_error'],
    ['invalid_request', 'api_invalid_request'],
    ['model_not_found', 'model_not_found'],
    ['max_output_tokens', 'output_token_limit'],
    ['unknown', 'native_error'],
  ];
  for (const [error, expected] of assistant) {
    const frames = [
      JSON.stringify({ type: 'assistant', error, message: { model: '<synthetic>' } }),
      result({ is_error: true, api_error_status: null, terminal_reason: 'api_error' }),
    ];
    assert.equal(classifyRun(fromFrames(frames)).error?.code, expected, error);
  }
  assert.equal(
    classifyRun(fromFrames([result({ is_error: true, api_error_status: null, terminal_reason: 'image_error' })])).error?.code,
    'api_invalid_request',
  );
  assert.equal(
    classifyRun(fromFrames([result({ is_error: true, terminal_reason: 'aborted_tools', api_error_status: 500 })])).error?.code,
    'aborted',
  );
});

test('no final event: assistant error and stderr still explain the failure', () => {
  const frames = [
    INIT,
    JSON.stringify({ type: 'assistant', error: 'rate_limit', api_error_status: 429, message: { model: '<synthetic>' } }),
  ];
  assert.equal(classifyRun(fromFrames(frames, { exit: { code: 1, signal: null } })).error?.code, 'rate_limited');
  assert.equal(mapNativeError(fromFrames([INIT]).ingest, ''), null);
  assert.equal(mapNativeError(fromFrames([result({})]).ingest, 'is already in use'), null, 'a success is never re-read as a failure');
});

test('termination reasons outrank everything; the native error and final stay in the result', () => {
  const cancelled = classifyRun(fromCapture('sig-int-stream', { termination: 'cancel' }));
  assert.equal(cancelled.error?.code, 'cancelled');
  assert.equal(cancelled.cancelled, true);
  assert.equal(cancelled.native_error?.code, 'aborted');
  assert.equal(cancelled.final?.['terminal_reason'], 'aborted_streaming');
  const hung = classifyRun(fromCapture('golden-ok-stream-partial', { termination: 'timeout', exit: { code: null, signal: 'SIGKILL' } }));
  assert.equal(hung.error?.code, 'timeout', 'a final event followed by a hung process times out');
  assert.equal(hung.timed_out, true);
  assert.equal(hung.result, 'Hi! I am a fake Claude.');
  assert.equal(hung.signal, 'SIGKILL');
  const idle = classifyRun(fromCapture('err-r0-http_401', { termination: 'idle_timeout' }));
  assert.equal(idle.error?.code, 'idle_timeout');
  assert.equal(idle.timed_out, true);
  assert.equal(idle.native_error?.code, 'authentication_failed');
});

test('bound terminations report the offending sizes', () => {
  const ingest = createIngest({ ringId: 'r' });
  ingest.onOversizeFrame(2_000_000);
  const frame = classifyRun({ ...fromFrames([]), ingest: ingest.snapshot(), termination: 'frame_too_large' });
  assert.equal(frame.error?.code, 'native_frame_too_large');
  assert.match(frame.error?.message ?? '', /2000000 bytes/);
  const big = createIngest({ ringId: 'r', maxFinalBytes: 100 });
  big.onFrame(Buffer.from(result({})));
  const final = classifyRun({ ...fromFrames([]), ingest: big.snapshot(), termination: 'final_too_large' });
  assert.equal(final.error?.code, 'final_event_too_large');
  assert.match(
    final.error?.message ?? '',
    /exceeded its bound of 100 bytes\./,
    'the message names the bound this run was held to, not the default',
  );
  assert.equal(final.final, null);
  assert.equal(final.result, null, 'no truncated success');
});

test('spawn failure outranks everything but termination', () => {
  const outcome = classifyRun(fromFrames([], { exit: null, spawnError: { code: 'ENOENT', message: 'spawn claude ENOENT' } }));
  assert.equal(outcome.error?.code, 'spawn_failed');
  assert.match(outcome.error?.message ?? '', /ENOENT/);
  assert.equal(outcome.exit_code, null);
  assert.equal(outcome.session_id, null);
  assert.equal(outcome.model, null);
  assert.equal(outcome.usage, null);
  assert.equal(outcome.total_cost_usd, null);
  assert.equal(outcome.num_turns, null);
  assert.equal(outcome.permission_denials, null);
});

test('final-event problems: duplicate, invalid, malformed output, missing', () => {
  assert.equal(classifyRun(fromFrames([result({}), result({})])).error?.code, 'duplicate_final_event');
  const dupAfterError = classifyRun(
    fromFrames([result({ is_error: true, api_error_status: 429 }), result({})], { exit: { code: 1, signal: null } }),
  );
  assert.equal(dupAfterError.error?.code, 'rate_limited', 'the native error outranks the duplicate');
  assert.equal(classifyRun(fromFrames(['{"type":"result","result":"x"}'])).error?.code, 'malformed_final_event');
  const garbled = classifyRun(fromFrames([INIT, '{"type":"result","subtype":"succ']));
  assert.equal(garbled.error?.code, 'malformed_final_event');
  assert.match(garbled.error?.message ?? '', /1 non-JSON line/);
  assert.equal(garbled.malformed_lines, 1);
  assert.equal(classifyRun(fromFrames([INIT])).error?.code, 'missing_final_event');
  const noSession = classifyRun(fromFrames([result({ session_id: null })]));
  assert.equal(noSession.error?.code, 'malformed_final_event');
  assert.match(noSession.error?.message ?? '', /session_id/);
  assert.equal(noSession.session_id, null);
  const noText = classifyRun(fromFrames([result({ result: 42 })]));
  assert.equal(noText.error?.code, 'malformed_final_event');
  assert.match(noText.error?.message ?? '', /textual result/);
  assert.equal(classifyRun(fromFrames([result({ result: '' })])).error, null, 'an empty string is still a textual result');
  const trailingGarbage = classifyRun(fromFrames([INIT, result({}), 'garbage']));
  assert.equal(trailingGarbage.error, null, 'non-JSON lines are counted but do not void one valid result');
  assert.equal(trailingGarbage.malformed_lines, 1);
});

test('exit status: non-zero, a signal, or unknown fail an otherwise successful run', () => {
  assert.equal(classifyRun(fromFrames([result({})], { exit: { code: 1, signal: null } })).error?.code, 'native_exit_nonzero');
  const signalled = classifyRun(fromFrames([result({})], { exit: { code: null, signal: 'SIGTERM' } }));
  assert.equal(signalled.error?.code, 'native_exit_nonzero');
  assert.match(signalled.error?.message ?? '', /SIGTERM/);
  assert.equal(classifyRun(fromFrames([result({})], { exit: null })).error?.code, 'supervisor_failed');
});

test('cleanup: unconfirmed fails a success; recorded separately when an earlier error decides', () => {
  const unconfirmed = classifyRun(
    fromFrames([result({})], { cleanup: { confirmed: false, error: 'pid 42 survived SIGKILL', proof: 'process_scan' as const } }),
  );
  assert.equal(unconfirmed.error?.code, 'cleanup_unconfirmed');
  assert.equal(unconfirmed.cleanup_error?.message, 'pid 42 survived SIGKILL');
  assert.equal(unconfirmed.cleanup_confirmed, false);
  assert.equal(unconfirmed.result, 'Hi! I am a fake Claude.');
  const vanished = classifyRun(
    fromFrames([result({})], { cleanup: { confirmed: false, error: null, code: 'supervisor_failed', proof: 'process_scan' as const } }),
  );
  assert.equal(vanished.error?.code, 'supervisor_failed');
  const both = classifyRun(
    fromCapture('err-r0-http_401', { cleanup: { confirmed: false, error: 'EOF without report', proof: 'process_scan' as const } }),
  );
  assert.equal(both.error?.code, 'authentication_failed');
  assert.equal(both.cleanup_error?.code, 'cleanup_unconfirmed');
  const confirmed = classifyRun(fromFrames([result({})], { cleanup: { confirmed: true, error: 'note', proof: 'process_scan' as const } }));
  assert.equal(confirmed.error, null, 'only an unconfirmed cleanup is a cleanup error');
  assert.equal(confirmed.cleanup_error, null);
});

test('permission denials come from the real native final event', () => {
  const outcome = classifyRun(fromCapture('perm-dontAsk__bash_redirect'));
  assert.equal(outcome.error, null);
  assert.equal(outcome.permission_denials?.length, 1);
  assert.equal(at(outcome.permission_denials, 0, 'tool_name'), 'Bash');
});

test('model: assistant message, else the single key of this call usage, else init, else null', () => {
  const state = (frames: string[]): IngestState => fromFrames(frames).ingest;
  const run = (frames: string[]): string | null => classifyRun({ ...fromFrames([]), ingest: state(frames) }).model;
  assert.equal(run([INIT, JSON.stringify({ type: 'assistant', message: { model: 'claude-x' } }), result({})]), 'claude-x');
  assert.equal(run([result({ model_usage_since_last_result: { 'claude-y': {} }, modelUsage: { a: {}, b: {} } })]), 'claude-y');
  assert.equal(run([result({ model_usage_since_last_result: {}, modelUsage: { 'claude-z': {} } })]), 'claude-z');
  assert.equal(run([INIT, result({ model_usage_since_last_result: { a: {}, b: {} }, modelUsage: { a: {}, b: {} } })]), 'claude-opus-5-5');
  assert.equal(classifyRun(fromCapture('err-r0-http_401')).model, 'claude-opus-5-5', 'synthetic ignored; init reports the model');
  assert.equal(run([]), null);
});

test('session id: final, else init (a killed run still reports the id it started)', () => {
  assert.equal(classifyRun(fromCapture('sig-term-stream')).session_id, '3c8f0e3f-30cd-4bfb-8dad-bf772835550b');
});

test('resumed reflects what the native process reported (real session captures)', () => {
  const id = '11111111-2222-4333-8444-555555555555';
  const fork = '3663ab2d-0c92-40ab-ad79-bf90a11ef6e8';
  const cases: Array<[string, ClassifyInput['session'], string[], boolean | null]> = [
    ['sess-02-resume', { kind: 'resume', sessionId: id, fork: false }, [], true],
    ['sess-02-resume', { kind: 'resume', sessionId: '99999999-2222-4333-8444-555555555555', fork: false }, [], false],
    ['sess-04-resume-unknown', { kind: 'resume', sessionId: '99999999-2222-4333-8444-555555555555', fork: false }, [], false],
    ['sess-08-fork', { kind: 'resume', sessionId: id, fork: true }, [], true],
    ['sess-02-resume', { kind: 'resume', sessionId: id, fork: true }, [], false],
    ['sess-09-continue', { kind: 'continue', fork: false }, [id, fork], true],
    ['sess-10-continue-nothing', { kind: 'continue', fork: false }, [], false],
    ['sess-10-continue-nothing', { kind: 'continue', fork: false }, [id, fork], false],
    ['sess-08-fork', { kind: 'continue', fork: true }, [id], true],
    ['sess-08-fork', { kind: 'continue', fork: true }, [], false],
    ['sess-01-session-id', { kind: 'new', sessionId: id }, [], false],
    ['sess-01-session-id', { kind: 'fresh' }, [], false],
  ];
  for (const [name, session, known, expected] of cases) {
    const outcome = classifyRun(fromCapture(name, { session, continueKnownSessionIds: known }));
    assert.equal(outcome.resumed, expected, `${name} ${JSON.stringify(session)} ${known.length}`);
    assert.equal(outcome.resume_requested, session.kind === 'resume' || session.kind === 'continue');
  }
  const nothing = classifyRun(
    fromFrames([], { session: { kind: 'resume', sessionId: id, fork: false }, exit: null, spawnError: { code: 'ENOENT', message: 'x' } }),
  );
  assert.equal(nothing.resumed, null, 'nothing reported: unknown');
  const mismatch = classifyRun(
    fromFrames([INIT.replace('89091831-a95e-44bd-95a5-40cc9d0c6251', id), result({ session_id: 'other' })], {
      session: { kind: 'resume', sessionId: id, fork: false },
    }),
  );
  assert.equal(mismatch.resumed, false, 'init and final disagree');
});
