// `resumed` says what the native process really did, separate from `resume_requested`. The fake CLI
// keeps real transcripts under $HOME/.claude (HOME is the harness folder), so each claim is checked
// against the native config folder too.
//
// Fork: `resumed: true` means the run really loaded the requested conversation's history; the reported
// session_id is then the new fork's id (the original conversation is left as it was).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonObject } from '../../lib/util/json.ts';
import { at } from '../helpers/typed-results.ts';
import { encodeProjectPath } from '../../lib/native/transcripts.ts';
import { createSessionHarness, type SessionHarness } from './helpers.ts';

const ID = '3b9d6a1e-2f4c-4e8a-9b7d-5c6e7f8a9b0c';
const UNKNOWN = '0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';

async function run(h: SessionHarness, args: JsonObject): Promise<{ isError: boolean; code: string | null; r: JsonObject }> {
  const out = await h.call('claude.run', { prompt: 'go', ...args });
  // The whole result object: resume_requested is there, next to resumed.
  const r = out.result === null ? {} : await h.full(out.result['run_id']);
  return { isError: out.isError, code: out.error?.code ?? null, r };
}

test('new, in use, resume found, resume not found, and fork report resumed honestly', async () => {
  const h = await createSessionHarness();
  try {
    const cwd = h.subdir('proj');
    const created = await run(h, { cwd, session_id: ID });
    assert.equal(created.isError, false);
    assert.deepEqual([created.r['session_id'], created.r['resume_requested'], created.r['resumed']], [ID, false, false]);
    assert.deepEqual(h.transcripts(cwd), [ID]);

    const inUse = await run(h, { cwd, session_id: ID });
    assert.deepEqual([inUse.code, inUse.r], ['session_id_in_use', {}], 'refused before anything is spawned');

    // Natively: released here (this adapter no longer knows it) and saved under another directory.
    await h.call('claude.run.release', { run_id: String(created.r['run_id']) });
    const nativeInUse = await run(h, { cwd: h.subdir('third'), session_id: ID });
    assert.equal(nativeInUse.code, 'session_id_in_use');
    assert.match(String(at(nativeInUse.r, 'error', 'message')), /already in use/);
    assert.equal(nativeInUse.r['resumed'], false);
    assert.equal(nativeInUse.r['cleanup_confirmed'], true);

    const other = h.subdir('elsewhere');
    const found = await run(h, { cwd: other, resume_session_id: ID }); // 2.1.332 resumes across directories
    assert.equal(found.isError, false);
    assert.deepEqual([found.r['session_id'], found.r['resume_requested'], found.r['resumed']], [ID, true, true]);

    const missing = await run(h, { cwd, resume_session_id: UNKNOWN });
    assert.equal(missing.code, 'session_not_found', 'never a silent fresh start');
    assert.deepEqual([missing.r['resume_requested'], missing.r['resumed']], [true, false]);
    assert.equal(h.transcripts(cwd).includes(UNKNOWN), false);

    const forked = await run(h, { cwd, resume_session_id: ID, fork_session: true });
    assert.equal(forked.isError, false);
    const forkId = String(forked.r['session_id']);
    assert.notEqual(forkId, ID, 'a fork reports its new id');
    assert.equal(forked.r['resumed'], true, 'the fork really loaded the requested history');
    assert.deepEqual(h.transcripts(cwd), [ID, forkId].sort());
    const history = readFileSync(join(h.dir, '.claude', 'projects', encodeProjectPath(cwd), `${forkId}.jsonl`), 'utf8');
    assert.ok(history.split('\n').filter((l) => l.includes('"type":"user"')).length >= 3, 'the fork carries the earlier turns');

    const forkMissing = await run(h, { cwd, resume_session_id: UNKNOWN, fork_session: true });
    assert.deepEqual([forkMissing.code, forkMissing.r['resumed']], ['session_not_found', false]);
  } finally {
    await h.close();
  }
});

test('continue: false in a directory without a conversation (the silent fresh start), true with one', async () => {
  const h = await createSessionHarness();
  try {
    const cwd = h.subdir('empty');
    assert.deepEqual(h.transcripts(cwd), []);
    const first = await run(h, { cwd, continue_previous: true });
    assert.equal(first.isError, false, 'the CLI exits 0 and so does the run');
    assert.deepEqual([first.r['resume_requested'], first.r['resumed']], [true, false]);
    // Proof from the native config folder: the reported conversation did not exist before this run.
    assert.deepEqual(h.transcripts(cwd), [String(first.r['session_id'])]);

    const second = await run(h, { cwd, continue_previous: true });
    assert.deepEqual([second.r['session_id'], second.r['resumed']], [first.r['session_id'], true]);

    const forked = await run(h, { cwd, continue_previous: true, fork_session: true });
    assert.notEqual(forked.r['session_id'], first.r['session_id']);
    assert.equal(forked.r['resumed'], true);

    const emptyFork = await run(h, { cwd: h.subdir('empty-2'), continue_previous: true, fork_session: true });
    assert.equal(emptyFork.isError, false);
    assert.equal(emptyFork.r['resumed'], false, 'nothing to fork from: a fresh conversation');
  } finally {
    await h.close();
  }
});

test('two concurrent continues of an empty directory: the second really continues the first', async () => {
  const h = await createSessionHarness({ FAKE_CLAUDE_SCENARIO: 'slow', FAKE_CLAUDE_SLOW_EVENTS: '4', FAKE_CLAUDE_DELAY_MS: '100' });
  try {
    const cwd = h.subdir('race');
    const a = await h.start({ prompt: 'A', cwd, continue_previous: true });
    const b = await h.start({ prompt: 'B', cwd, continue_previous: true });
    const ra = (await h.settled(a)).result!;
    const rb = (await h.settled(b)).result!;
    assert.equal(ra['resumed'], false);
    assert.equal(rb['session_id'], ra['session_id'], 'the second continue picked the conversation the first created');
    assert.equal(rb['resumed'], true, 'and says so');
    assert.deepEqual(h.transcripts(cwd), [String(ra['session_id'])]);
  } finally {
    await h.close();
  }
});
