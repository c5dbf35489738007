// Native failures and permission denials for real: the pinned claude meets a failing or tool-asking
// fake API, and the adapter maps what the native process reported to stable codes, keeping the evidence.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { lastToolResult, promptTag } from '../../fixtures/fake-anthropic/server.ts';
import { inCwd, marker, startAdapterTier } from './adapter-tier.ts';
import type { AdapterTier } from './adapter-tier.ts';
import { at, eventPageOf, objAt, objs } from '../helpers/typed-results.ts';

interface FailureCase {
  readonly preset: string;
  readonly code: string;
  /** api_error_status of the native final event. */
  readonly status: number | null;
  /** `error` of the native synthetic assistant message. */
  readonly assistantError: string;
  /** /v1/messages calls the native process made (retries are off; a cut stream falls back once). */
  readonly calls: number;
  readonly text: RegExp;
}

const FAILURES: readonly FailureCase[] = [
  {
    preset: 'http_401',
    code: 'authentication_failed',
    status: 401,
    assistantError: 'authentication_failed',
    calls: 1,
    text: /^Failed to authenticate\. API Error: 401 fake 401/,
  },
  {
    preset: 'http_429',
    code: 'rate_limited',
    status: 429,
    assistantError: 'rate_limit',
    calls: 1,
    text: /^API Error: Request rejected \(429\)/,
  },
  { preset: 'http_500', code: 'api_server_error', status: 500, assistantError: 'server_error', calls: 1, text: /^API Error: 500 fake 500/ },
  { preset: 'http_529', code: 'overloaded', status: 529, assistantError: 'server_error', calls: 1, text: /^API Error: 529 fake 529/ },
  {
    preset: 'cut_all',
    code: 'api_server_error',
    status: null,
    assistantError: 'server_error',
    calls: 2,
    text: /^API Error: Connection dropped \(ECONNRESET\)/,
  },
];

describe('adapter over the real binary: API failures and permission denials', () => {
  let tier: AdapterTier;
  before(async () => {
    tier = await startAdapterTier();
  });
  after(async () => {
    await tier.close();
  });

  for (const c of FAILURES) {
    it(`${c.preset} → ${c.code}, with native_error, the final event and the assistant error kept`, async () => {
      await inCwd(tier, async (cwd) => {
        const prompt = `fail please ${marker(c.preset)} ${promptTag(c.preset)}`;
        const out = await tier.call('claude.run', { prompt, cwd });
        const r = await tier.full(out.result['run_id']);
        assert.equal(out.isError, true);
        assert.equal(out.error?.code, c.code);
        assert.equal(r['is_error'], true);
        assert.deepEqual(r['error'], out.error);
        assert.deepEqual(r['native_error'], r['error'], 'the native failure is the reported error');
        const final = objAt(r, 'final');
        assert.equal(final['type'], 'result');
        assert.equal(
          final['subtype'],
          'success',
          'API errors arrive as subtype success with is_error true (2.1.332 reports every API error that way, exit code 1)',
        );
        assert.equal(final['is_error'], true);
        assert.equal(final['api_error_status'], c.status);
        assert.equal(final['terminal_reason'], 'api_error');
        assert.match(String(final['result']), c.text);
        assert.equal(r['result'], final['result']);
        assert.equal(out.error?.message, final['result']);
        assert.equal(r['exit_code'], 1);
        assert.equal(r['api_retries'], 0);
        assert.equal(r['cleanup_confirmed'], true);
        assert.equal(r['session_id'], final['session_id']);
        const page = await tier.call('claude.run.events', { run_id: r['run_id'], limit: 256 });
        const events = eventPageOf(page.result).events.map((e) => e.event);
        const assistant = events.filter((e) => e['type'] === 'assistant').at(-1);
        assert.equal(assistant?.['error'], c.assistantError);
        assert.equal(tier.callsWith(prompt).length, c.calls);
      });
    });
  }

  it('a cut stream whose non-streaming fallback succeeds is an honest success (partial deltas superseded)', async () => {
    await inCwd(tier, async (cwd) => {
      const prompt = `cut once ${marker('cut')} ${promptTag('cut')}`;
      const out = await tier.call('claude.run', { prompt, cwd });
      assert.equal(out.isError, false, JSON.stringify(out.error));
      assert.equal(out.result['result'], 'Hi! I am a fake Claude.');
      assert.deepEqual(
        tier.callsWith(prompt).map((r) => r.stream),
        [true, false],
        'stream cut, then the fallback',
      );
    });
  });

  for (const mode of ['dontAsk', 'plan'] as const) {
    it(`${mode}: the fake model's Bash touch is denied, surfaced in permission_denials, and nothing ran`, async () => {
      await inCwd(tier, async (cwd) => {
        const prompt = `make a marker ${marker(mode)} ${promptTag('tool_bash')}`;
        const out = await tier.call('claude.run', { prompt, cwd, permission_mode: mode });
        const r = await tier.full(out.result['run_id']);
        assert.deepEqual(out.result['permission_denials'], r['permission_denials'], 'the summary carries the denials');
        assert.equal(out.isError, false, 'a denial is not a run failure: the turn completes');
        assert.equal(r['num_turns'], 2);
        const denials = objs(r['permission_denials'], 'permission_denials');
        assert.equal(denials.length, 1);
        assert.equal(at(denials, 0, 'tool_name'), 'Bash');
        assert.equal(at(denials, 0, 'tool_input', 'command'), 'touch fake-tool-marker.txt');
        assert.deepEqual(r['permission_denials'], at(r, 'final', 'permission_denials'));
        assert.equal(existsSync(join(cwd, 'fake-tool-marker.txt')), false, 'the denied command did not run');
        const calls = tier.callsWith(prompt);
        assert.equal(calls.length, 2);
        const fed = lastToolResult(calls[1]?.body);
        assert.equal(fed?.isError, true, 'the model was told the tool failed');
        const page = await tier.call('claude.run.events', { run_id: r['run_id'], limit: 256 });
        const events = eventPageOf(page.result).events.map((e) => e.event);
        assert.equal(events.find((e) => e['type'] === 'system' && e['subtype'] === 'init')?.['permissionMode'], mode);
        assert.ok(
          events.some((e) => e['type'] === 'system' && e['subtype'] === 'permission_denied'),
          'system/permission_denied emitted',
        );
      });
    });
  }
});
