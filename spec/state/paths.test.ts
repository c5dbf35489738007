import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { defaultStateDir, entryKind, recordName } from '../../lib/state/paths.ts';
import { newRunId } from '../../lib/runs/ids.ts';

test('the default state directory per platform, XDG_STATE_HOME only when absolute and only on Linux', () => {
  assert.equal(defaultStateDir('linux', {}, '/home/u'), '/home/u/.local/state/claude-run-mcp');
  assert.equal(defaultStateDir('linux', { XDG_STATE_HOME: '/x/state' }, '/home/u'), '/x/state/claude-run-mcp');
  assert.equal(defaultStateDir('linux', { XDG_STATE_HOME: 'relative' }, '/home/u'), '/home/u/.local/state/claude-run-mcp');
  assert.equal(defaultStateDir('linux', { XDG_STATE_HOME: '' }, '/home/u'), '/home/u/.local/state/claude-run-mcp');
  assert.equal(
    defaultStateDir('darwin', { XDG_STATE_HOME: '/x/state' }, '/Users/u'),
    '/Users/u/Library/Application Support/claude-run-mcp',
  );
  assert.equal(defaultStateDir('linux', {}, ''), null);
  assert.equal(defaultStateDir('darwin', {}, 'relative'), null);
});

test('entry names: records of well-formed run ids, temp files, everything else foreign', () => {
  const runId = newRunId(randomBytes, '0f8fad5b-d9cb-469f-a165-70867728950e');
  assert.deepEqual(entryKind(recordName(runId)), { kind: 'record', runId });
  assert.deepEqual(entryKind('.tmp-0123456789abcdef'), { kind: 'temp' });
  for (const name of ['run-run_AAAAAAAAAAAAAAAAAAAAAA.json', `run-${runId}.json.bak`, '.tmp-xyz', `run-../${runId}.json`, 'notes.txt'])
    assert.deepEqual(entryKind(name), { kind: 'foreign' }, name);
});
