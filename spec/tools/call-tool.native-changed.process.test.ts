// A version answer vouches only for the file that gave it. An upgrade that re-links the binary while its
// version is being checked leaves an answer about no file in particular: the run is refused with
// native_changed and the new binary never runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolHarness } from '../helpers/tool-harness.ts';

test('a binary re-linked during its own version check is not started: native_changed, cleanup confirmed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-changed-'));
  const link = join(dir, 'claude');
  const ran = join(dir, 'b-ran');
  const b = join(dir, 'b.mjs');
  const a = join(dir, 'a.mjs');
  // B: the "upgraded" binary; it must never run as the native.
  writeFileSync(
    b,
    `#!${process.execPath}\nimport { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(ran)}, process.argv.slice(2).join(' '));\n`,
  );
  // A: answers the tested version, but re-links the bin to B while answering.
  writeFileSync(
    a,
    `#!${process.execPath}\nimport { renameSync, symlinkSync } from 'node:fs';\nsymlinkSync(${JSON.stringify(b)}, ${JSON.stringify(`${link}.next`)});\nrenameSync(${JSON.stringify(`${link}.next`)}, ${JSON.stringify(link)});\nprocess.stdout.write('2.1.332 (Claude Code)\\n');\n`,
  );
  chmodSync(a, 0o755);
  chmodSync(b, 0o755);
  symlinkSync(a, link);
  const h = await createToolHarness({ config: { claudeBin: link } });
  try {
    const out = await h.call('claude.run', { prompt: 'x', cwd: h.dir });
    assert.equal(out.isError, true);
    assert.equal(out.error?.code, 'native_changed', out.text.slice(0, 400));
    assert.equal(out.result?.['cleanup_confirmed'], true);
    assert.equal(existsSync(ran), false, 'the re-linked binary never ran');
  } finally {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
