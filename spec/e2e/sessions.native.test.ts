// Sessions for real: the adapter's session arguments against the pinned claude's own transcripts
// (under the sandbox HOME), judged by what the native process reported and what reached the API.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { lastUserText } from '../../fixtures/fake-anthropic/server.ts';
import type { RecordedRequest } from '../../fixtures/fake-anthropic/server.ts';
import { inCwd, marker, startAdapterTier } from './adapter-tier.ts';
import type { AdapterTier, CallOutcome } from './adapter-tier.ts';
import { arrAt, obj, toolBody } from '../helpers/typed-results.ts';
import { toolErrorOf } from '../helpers/tool-harness.ts';

type Json = Record<string, unknown>;

describe('adapter over the real binary: sessions', () => {
  let tier: AdapterTier;
  before(async () => {
    tier = await startAdapterTier();
  });
  after(async () => {
    await tier.close();
  });

  /** A successful run's whole result object (resume_requested and the final event are not in the summary). */
  const ok = async (out: CallOutcome, saved = true): Promise<Json> => {
    assert.equal(out.isError, false, JSON.stringify(out.error));
    assert.equal(out.result['cleanup_confirmed'], true);
    const resume = saved ? { resume_session_id: out.result['session_id'] } : null;
    assert.deepEqual(out.result['resume'], resume, 'the summary names the argument that continues it, when something was saved');
    return tier.full(out.result['run_id']);
  };
  const onlyCall = (prompt: string): RecordedRequest => {
    const calls = tier.callsWith(prompt).filter((r) => lastUserText(r.body) === prompt);
    const [call] = calls;
    assert.ok(call !== undefined && calls.length === 1, `one model call for ${prompt} (${calls.length})`);
    return call;
  };
  /** User texts the API was sent, oldest first: the history the native process replayed. */
  const sentUserTexts = (request: RecordedRequest): string => JSON.stringify(arrAt(request.body, 'messages'));
  const transcript = (cwd: string, id: string): Promise<string> => readFile(join(tier.projectDir(cwd), `${id}.jsonl`), 'utf8');

  it('session_id new → resume_session_id continues it → fork_session mints a new id; transcripts on disk', async () => {
    await inCwd(tier, async (cwd) => {
      const id = randomUUID();
      const first = `first turn ${marker('s1')}`;
      const created = await ok(await tier.call('claude.run', { prompt: first, cwd, session_id: id }));
      assert.equal(created['session_id'], id);
      assert.equal(obj(created['final'])['session_id'], id);
      assert.equal(created['resume_requested'], false);
      assert.equal(created['resumed'], false);
      assert.deepEqual(await tier.transcripts(cwd), [id]);
      assert.match(await transcript(cwd, id), new RegExp(first));

      const second = `second turn ${marker('s2')}`;
      const resumed = await ok(await tier.call('claude.run', { prompt: second, cwd, resume_session_id: id }));
      assert.equal(resumed['session_id'], id);
      assert.equal(resumed['resume_requested'], true);
      assert.equal(resumed['resumed'], true);
      assert.equal(
        resumed['num_turns'],
        1,
        'num_turns counts this invocation only (2.1.332 counts the turns of the resuming invocation, not of the conversation)',
      );
      assert.ok(sentUserTexts(onlyCall(second)).includes(first), 'the first turn was sent to the API as history');
      assert.deepEqual(await tier.transcripts(cwd), [id], 'resume appends to the same transcript');
      const appended = await transcript(cwd, id);
      assert.match(appended, new RegExp(first));
      assert.match(appended, new RegExp(second));

      const third = `forked turn ${marker('s3')}`;
      const forked = await ok(await tier.call('claude.run', { prompt: third, cwd, resume_session_id: id, fork_session: true }));
      const forkId = String(forked['session_id']);
      assert.notEqual(forkId, id);
      assert.match(forkId, /^[0-9a-f-]{36}$/);
      assert.equal(forked['resumed'], true);
      assert.ok(sentUserTexts(onlyCall(third)).includes(second), 'the fork carries the history');
      assert.deepEqual(await tier.transcripts(cwd), [id, forkId].sort());
      assert.doesNotMatch(await transcript(cwd, id), new RegExp(third), 'the original transcript is untouched by the fork');

      // The returned id passed back as session_id: refused before anything is spawned, naming resume_session_id.
      const againPrompt = `again ${marker('s4')}`;
      const taken = await tier.client.callTool({ name: 'claude.run', arguments: { prompt: againPrompt, cwd, session_id: id } });
      assert.equal(taken.isError, true);
      assert.equal(taken.structuredContent, undefined, 'no run was reserved');
      const refusal = toolErrorOf(toolBody(taken)['error']);
      assert.deepEqual([refusal?.code, refusal?.path], ['session_id_in_use', '/session_id']);
      assert.match(String(refusal?.message), /resume_session_id/);
      assert.deepEqual(tier.callsWith(againPrompt), [], 'nothing reached the API');
    });
  });

  it('resume_session_id of an unknown id → session_not_found with the native evidence, no model call', async () => {
    await inCwd(tier, async (cwd) => {
      const id = randomUUID();
      const prompt = `resume nothing ${marker('nf')}`;
      const out = await tier.call('claude.run', { prompt, cwd, resume_session_id: id });
      assert.equal(out.isError, true);
      assert.equal(out.error?.code, 'session_not_found');
      assert.equal(out.result['resume'], null, 'a conversation that does not exist cannot be continued');
      const r = await tier.full(out.result['run_id']);
      assert.equal(obj(r['native_error'])['code'], 'session_not_found');
      assert.match(String(obj(r['native_error'])['message']), new RegExp(`No conversation found with session ID: ${id}`));
      const final = obj(r['final']);
      assert.equal(final['subtype'], 'error_during_execution');
      assert.equal(final['is_error'], true);
      assert.equal(final['num_turns'], 0);
      assert.equal(r['resume_requested'], true);
      assert.equal(r['resumed'], false);
      assert.equal(r['exit_code'], 1);
      assert.equal(r['cleanup_confirmed'], true);
      assert.deepEqual(tier.callsWith(prompt), [], 'nothing reached the API');
      assert.deepEqual(await tier.transcripts(cwd), []);
    });
  });

  it('continue_previous: in an empty cwd it honestly starts a new conversation; then it continues that one', async () => {
    await inCwd(tier, async (cwd) => {
      const first = `continue from nothing ${marker('c1')}`;
      const fresh = await ok(await tier.call('claude.run', { prompt: first, cwd, continue_previous: true }));
      assert.equal(fresh['resume_requested'], true);
      assert.equal(fresh['resumed'], false, 'no prior conversation here: the CLI silently started a new one');
      const id = String(fresh['session_id']);
      assert.deepEqual(await tier.transcripts(cwd), [id]);

      const second = `continue it ${marker('c2')}`;
      const continued = await ok(await tier.call('claude.run', { prompt: second, cwd, continue_previous: true }));
      assert.equal(continued['session_id'], id);
      assert.equal(continued['resumed'], true);
      assert.ok(sentUserTexts(onlyCall(second)).includes(first), 'the previous turn was sent as history');
      assert.deepEqual(await tier.transcripts(cwd), [id]);
    });
  });

  it('no_session_persistence: the run succeeds and leaves no transcript; resuming its id is session_not_found', async () => {
    await inCwd(tier, async (cwd) => {
      const out = await ok(
        await tier.call('claude.run', { prompt: `forget me ${marker('np')}`, cwd, no_session_persistence: true }),
        false,
      );
      const id = String(out['session_id']);
      assert.match(id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(await tier.transcripts(cwd), [], 'no transcript written');
      const again = await tier.call('claude.run', { prompt: `remember? ${marker('np2')}`, cwd, resume_session_id: id });
      assert.equal(again.error?.code, 'session_not_found');
    });
  });
});
