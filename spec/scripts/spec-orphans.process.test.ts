/**
 * The runner's record and the orphan sweep (scripts/spec-orphans.mjs) in a temp dir others may write to, as
 * /tmp is: the record is written only through a file of its own making, never through a name someone planted
 * (a symlink to their file would be truncated and overwritten), and the sweep of a run whose runner is gone
 * removes only the temp dirs its record lists that are real directories of this user, named for the run,
 * directly in the temp dir. Checked from a plain node process, as the runner runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { arr, parseObj, str } from '../helpers/typed-results.ts';
import { ownPidSpace } from '../../lib/process/proc-table.ts';

const ORPHANS = fileURLToPath(new URL('../../scripts/spec-orphans.mjs', import.meta.url));
/** The uid that owns nothing here (nobody): a stranger's files, where this spec runs as root. */
const STRANGER_UID = 65534;
const VICTIM_TEXT = 'a stranger kept this\n';

/** Runs `body` (module code that may `await`, with `orphans` imported) in a plain node; returns what it printed as JSON. */
function inRunner(body: string): Record<string, unknown> {
  const script = `import * as orphans from ${JSON.stringify(ORPHANS)};\n${body}`;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return parseObj(out.stdout, 'the nested output');
}

/** A temp dir open to all as /tmp is (sticky, world-writable), with a stranger's file in a dir beside it. */
function sharedTmp(): { root: string; tmp: string; victim: string } {
  const root = mkdtempSync(join(tmpdir(), 'orphans-spec-'));
  const tmp = join(root, 'tmp');
  mkdirSync(tmp);
  chmodSync(tmp, 0o1777);
  const victim = join(root, 'victim.txt');
  writeFileSync(victim, VICTIM_TEXT);
  return { root, tmp, victim };
}

const newRunId = (): string => randomBytes(4).toString('hex');

test('the record is written through a fresh private file: a symlink planted at the name it once wrote through is never followed', () => {
  const { root, tmp, victim } = sharedTmp();
  const runId = newRunId();
  try {
    // The name the record was once written through, predictable once the run id shows in the record's name.
    const planted = join(tmp, `.crm-spec-${runId}.run.json.tmp`);
    symlinkSync(victim, planted);
    const dirName = `crm-spec-${runId}-0-abcdef`;
    const out = inRunner(`const path = orphans.recordRun(${JSON.stringify(tmp)}, ${JSON.stringify(runId)}, { cgroup: null, dirs: [] });
process.stdout.write(JSON.stringify({ path }));`);
    assert.equal(readFileSync(victim, 'utf8'), VICTIM_TEXT, 'the write followed the planted symlink');
    assert.equal(readlinkSync(planted), victim, 'the planted symlink was touched');
    const path = str(out['path'], 'path');
    assert.equal(path, join(tmp, `crm-spec-${runId}.run.json`));
    // Written again once the run id is public: through a fresh file again.
    inRunner(`orphans.rewriteRun(${JSON.stringify(path)}, ${JSON.stringify(runId)}, { cgroup: null, dirs: [${JSON.stringify(dirName)}] });
process.stdout.write('{}');`);
    assert.equal(readFileSync(victim, 'utf8'), VICTIM_TEXT, 'the rewrite followed the planted symlink');
    const stat = lstatSync(path);
    assert.ok(stat.isFile(), 'the record is a regular file');
    assert.equal(stat.mode & 0o777, 0o600, 'the record is readable by its user only');
    const record = parseObj(readFileSync(path, 'utf8'), 'the record');
    assert.equal(record['runId'], runId);
    assert.deepEqual(arr(record['dirs'], 'dirs'), [dirName], 'the rewrite is the record');
    // Nothing of the writes is left beside it: only the record and what was planted.
    assert.deepEqual(readdirSync(tmp).sort(), [`.crm-spec-${runId}.run.json.tmp`, `crm-spec-${runId}.run.json`]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a record's name already taken (a planted symlink) fails the write, and what is there is left as it was", () => {
  const { root, tmp, victim } = sharedTmp();
  const runId = newRunId();
  try {
    const planted = join(tmp, `crm-spec-${runId}.run.json`);
    symlinkSync(victim, planted);
    const out = inRunner(`try {
  orphans.recordRun(${JSON.stringify(tmp)}, ${JSON.stringify(runId)}, { cgroup: null, dirs: [] });
  process.stdout.write(JSON.stringify({ code: null }));
} catch (error) {
  process.stdout.write(JSON.stringify({ code: error.code }));
}`);
    assert.equal(out['code'], 'EEXIST', 'the record took a name already in use');
    assert.ok(lstatSync(planted).isSymbolicLink(), 'the planted symlink was replaced');
    assert.equal(readlinkSync(planted), victim);
    assert.equal(readFileSync(victim, 'utf8'), VICTIM_TEXT);
    assert.deepEqual(readdirSync(tmp), [`crm-spec-${runId}.run.json`], 'the failed write left its temp file');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the sweep removes only the listed temp dirs that are this user's real directories: a stranger's dir, a symlink, a file, an unlisted dir survive", async () => {
  const { root, tmp } = sharedTmp();
  const runId = newRunId();
  const name = (tail: string): string => `crm-spec-${runId}-${tail}`;
  const asRoot = process.getuid?.() === 0;
  try {
    const own = name('0-aaaaaa');
    mkdirSync(join(tmp, own));
    writeFileSync(join(tmp, own, 'left-by-a-file.txt'), '');
    // A stranger's directory under the run's prefix (the run id shows in the record's name): only root can make one.
    const stranger = name('other');
    if (asRoot) {
      mkdirSync(join(tmp, stranger));
      writeFileSync(join(tmp, stranger, 'notes.txt'), VICTIM_TEXT);
      chownSync(join(tmp, stranger, 'notes.txt'), STRANGER_UID, STRANGER_UID);
      chownSync(join(tmp, stranger), STRANGER_UID, STRANGER_UID);
    }
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'keep.txt'), VICTIM_TEXT);
    const link = name('link');
    symlinkSync(elsewhere, join(tmp, link));
    const file = name('file');
    writeFileSync(join(tmp, file), VICTIM_TEXT);
    const unlisted = name('1-bbbbbb');
    mkdirSync(join(tmp, unlisted));
    mkdirSync(join(tmp, 'outside'));
    const dotted = `${name('')}/../outside`;
    const listed = [own, ...(asRoot ? [stranger] : []), link, file, dotted, name('2-cccccc')];
    const dead = spawnSync('true').pid;
    const space = `${ownPidSpace()?.pidNamespace} ${ownPidSpace()?.boot}`;
    const record = { runId, pid: dead, start: '1', space, cgroup: null, dirs: listed };
    writeFileSync(join(tmp, `crm-spec-${runId}.run.json`), JSON.stringify(record));
    const out = inRunner(`const lines = await orphans.sweepOrphanedRuns(${JSON.stringify(tmp)}, 10000);
process.stdout.write(JSON.stringify({ lines }));`);
    const leftAlone = asRoot ? 4 : 3;
    assert.deepEqual(arr(out['lines'], 'lines'), [
      `run ${runId} (its runner is gone): 0 processes ended, 1 temp dirs removed, ` +
        `${leftAlone} listed entries left alone (not a directory of this user named for the run in the temp dir)`,
    ]);
    if (asRoot) {
      assert.equal(lstatSync(join(tmp, stranger)).uid, STRANGER_UID, "the stranger's dir is gone");
      assert.equal(readFileSync(join(tmp, stranger, 'notes.txt'), 'utf8'), VICTIM_TEXT);
    }
    assert.ok(lstatSync(join(tmp, link)).isSymbolicLink(), 'the symlink is gone');
    assert.equal(readFileSync(join(elsewhere, 'keep.txt'), 'utf8'), VICTIM_TEXT);
    assert.equal(readFileSync(join(tmp, file), 'utf8'), VICTIM_TEXT);
    assert.ok(lstatSync(join(tmp, unlisted)).isDirectory(), 'a dir the record does not list is gone');
    assert.ok(lstatSync(join(tmp, 'outside')).isDirectory(), 'a listed name that leaves the run was followed');
    assert.equal(existsSync(join(tmp, own)), false, "the run's own listed dir was not removed");
    assert.equal(existsSync(join(tmp, `crm-spec-${runId}.run.json`)), false, 'the swept record was kept');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
