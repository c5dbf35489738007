import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listTranscriptIds } from '../../lib/native/transcripts.ts';

const DIR = '/config/projects/-work';

test('listTranscriptIds: newest first, only .jsonl files', () => {
  const mtimes: Record<string, number> = { [`${DIR}/a.jsonl`]: 1, [`${DIR}/b.jsonl`]: 3, [`${DIR}/c.jsonl`]: 2, [`${DIR}/notes.txt`]: 9 };
  const ids = listTranscriptIds(DIR, { names: () => ['a.jsonl', 'b.jsonl', 'c.jsonl', 'notes.txt'], mtimeMs: (p) => mtimes[p] ?? null });
  assert.deepEqual(ids, ['b', 'c', 'a']);
});

test('listTranscriptIds: a transcript that vanishes between listing and stat drops out alone', () => {
  const mtimes: Record<string, number> = { [`${DIR}/a.jsonl`]: 1, [`${DIR}/c.jsonl`]: 2 };
  const ids = listTranscriptIds(DIR, { names: () => ['a.jsonl', 'gone.jsonl', 'c.jsonl'], mtimeMs: (p) => mtimes[p] ?? null });
  assert.deepEqual(ids, ['c', 'a']);
});

test('listTranscriptIds: an unreadable folder lists nothing', () => {
  assert.deepEqual(listTranscriptIds(DIR, { names: () => [], mtimeMs: () => 0 }), []);
});
