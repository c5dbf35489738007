// `print` into a pipe whose reader starts late: every byte must arrive. Stdout writes to a full pipe
// queue in libuv, and exiting without waiting for that queue cut the output at the pipe capacity.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEADLINE_MS, ROOT, SOURCE_MAIN } from './server-process.ts';
import { pollUntil } from '../helpers/poll.ts';
import { parseObj } from '../helpers/typed-results.ts';

/** Well past the 64 KiB of a Linux pipe, below the 128 KiB bound on the final result. */
const RESULT_TEXT_BYTES = 120_000;
/** After its run finished, print gets this long (or until it exits) before anyone reads. */
const READER_DELAY_MS = 1000;
const POLL_MS = 10;

const exited = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve, reject) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('deadline: exit'));
    }, DEADLINE_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });

const childPids = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  } catch {
    return ''; // the process is gone
  }
};

/** Resolves once print's run is over: its supervisor child was seen and has exited (hard deadline). */
async function runFinished(print: ChildProcess): Promise<void> {
  const pid = print.pid ?? 0;
  let seenChild = false;
  await pollUntil(
    "print's run to finish",
    () => {
      if (print.exitCode !== null) return true;
      if (childPids(pid) !== '') seenChild = true;
      else if (seenChild) return true;
      return false;
    },
    { timeoutMs: DEADLINE_MS, intervalMs: POLL_MS },
  );
}

describe('print into a slow pipe', () => {
  it('a reader that starts late still receives every byte of a result past the pipe capacity', async () => {
    // A real pipe (64 KiB on Linux): child stdio pipes are socketpairs with far larger buffers.
    const dir = mkdtempSync(join(tmpdir(), 'print-pipe-'));
    const children: ChildProcess[] = [];
    try {
      const fifo = join(dir, 'out');
      assert.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo');
      // Opening the read end first (non-blocking) keeps the write open from blocking; holding it keeps
      // what print wrote in the pipe until the reader starts.
      const readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      const writeEnd = openSync(fifo, constants.O_WRONLY);
      // From source under tsx (its supervisor too): the e2e pass that keeps the source mode proven.
      const print = spawn(
        process.execPath,
        [...SOURCE_MAIN, 'print', '--permission-mode', 'dontAsk', '--claude-bin', 'fixtures/fake-claude.mjs', '--', 'say hi'],
        {
          cwd: ROOT,
          stdio: ['ignore', writeEnd, 'pipe'],
          env: { ...process.env, FAKE_CLAUDE_SCENARIO: 'huge_final', FAKE_CLAUDE_HUGE_BYTES: String(RESULT_TEXT_BYTES) },
        },
      );
      children.push(print);
      closeSync(writeEnd);
      let stderr = '';
      print.stderr?.setEncoding('utf8').on('data', (text: string) => {
        stderr += text;
      });
      const printExit = exited(print);

      await runFinished(print);
      // The run is over and print is writing: let it either exit (and lose what the pipe cannot hold) or wait.
      await Promise.race([printExit, new Promise((resolve) => setTimeout(resolve, READER_DELAY_MS))]);
      const reader = spawn(process.execPath, ['-e', 'process.stdin.pipe(process.stdout)'], { stdio: [readEnd, 'pipe', 'inherit'] });
      children.push(reader);
      closeSync(readEnd); // the reader sees EOF once print exits
      const chunks: Buffer[] = [];
      reader.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
      const [printCode, readerCode] = await Promise.all([printExit, exited(reader)]);
      assert.equal(printCode, 0, stderr);
      assert.equal(readerCode, 0);
      const output = Buffer.concat(chunks).toString('utf8');
      assert.ok(output.endsWith('\n'), `received ${output.length} bytes, cut short`);
      const result = parseObj(output, 'the printed result');
      assert.equal(result['type'], 'result');
      assert.equal(result['result'], 'y'.repeat(RESULT_TEXT_BYTES));
    } finally {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
