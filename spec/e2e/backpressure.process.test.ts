// A client that pipelines thousands of requests and stops reading stdout for a while: the server must
// stop reading requests instead of queueing responses without bound, then answer every request
// exactly once when the client reads again.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { MAIN, ROOT } from './server-process.ts';

const PIPELINED_REQUESTS = 20_000;
const WARMUP_REQUESTS = 200;
/** Generous (measured: +16 MiB); queueing 20,000 tools/list responses of ~14 KB without a bound grew it by ~330 MB. */
const MAX_RSS_GROWTH_BYTES = 100 * 1024 * 1024;
/** While stdout stays unread, RSS is sampled this often for this many samples. */
const STALL_SAMPLES = 20;
const STALL_SAMPLE_MS = 50;
const DEADLINE_MS = 150_000;
const POLL_MS = 20;
const NEWLINE = 0x0a;
const RESPONSE_ID = /^\{"jsonrpc":"2\.0","id":(\d+),"result"/;

/** VmRSS and VmHWM (peak) of a process, in bytes. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

describe('backpressure against the real server process', () => {
  it(`${PIPELINED_REQUESTS} pipelined tools/list with stdout unread: RSS stays bounded, then each is answered exactly once`, async (t) => {
    const child = spawn(process.execPath, MAIN, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    const total = WARMUP_REQUESTS + PIPELINED_REQUESTS;
    const answers = new Uint8Array(total + 1); // answers[id]: how many responses carried that id
    let answered = 0;
    let unexpected = '';
    let partial: Buffer = Buffer.alloc(0);
    let stderr = '';
    const waiters = new Set<() => void>();
    const notify = (): void => {
      for (const waiter of waiters) waiter();
    };
    const onLine = (line: Buffer): void => {
      const id = Number(RESPONSE_ID.exec(line.subarray(0, 64).toString('latin1'))?.[1] ?? -1);
      if (id < 0 || id > total) {
        unexpected ||= line.subarray(0, 200).toString('utf8');
        return;
      }
      answers[id] = (answers[id] ?? 0) + 1;
      answered++;
    };
    child.stdout.on('data', (chunk: Buffer) => {
      let data = partial.length > 0 ? Buffer.concat([partial, chunk]) : chunk;
      for (let nl = data.indexOf(NEWLINE); nl !== -1; nl = data.indexOf(NEWLINE)) {
        onLine(data.subarray(0, nl));
        data = data.subarray(nl + 1);
      }
      partial = Buffer.from(data);
      notify();
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
      notify();
    });
    child.on('exit', notify);
    const until = (what: string, predicate: () => boolean): Promise<void> =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (!predicate()) return;
          clearTimeout(timer);
          clearInterval(poll);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          clearInterval(poll);
          waiters.delete(check);
          reject(new Error(`deadline: ${what}; stderr: ${stderr}`));
        }, DEADLINE_MS);
        const poll = setInterval(check, POLL_MS); // some conditions change without an event here
        waiters.add(check);
        check();
      });
    const request = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/list"}\n`;

    try {
      await until('ready', () => stderr.includes('serving MCP on stdio'));
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'spec', version: '0' } } })}\n`,
      );
      child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
      const warmup: string[] = [];
      for (let id = 1; id <= WARMUP_REQUESTS; id++) warmup.push(request(id));
      child.stdin.write(warmup.join(''));
      await until('warm-up answered', () => answered === WARMUP_REQUESTS + 1);
      const pid = child.pid ?? 0;
      const idle = memory(pid);

      child.stdout.pause(); // the client stops reading
      const pipelined: string[] = [];
      for (let id = WARMUP_REQUESTS + 1; id <= total; id++) pipelined.push(request(id));
      child.stdin.write(pipelined.join(''));
      // Either the server says it paused reading, or (without backpressure) it swallowed every request.
      await until('server paused or read everything', () => stderr.includes('output backed up') || child.stdin.writableLength === 0);
      let stalledRss = 0;
      for (let sample = 0; sample < STALL_SAMPLES; sample++) {
        stalledRss = Math.max(stalledRss, memory(pid).rss);
        await new Promise((resolve) => setTimeout(resolve, STALL_SAMPLE_MS));
      }
      const answeredWhileStalled = answered;
      assert.ok(stalledRss - idle.rss < MAX_RSS_GROWTH_BYTES, `RSS with stdout unread ${mib(stalledRss)} vs idle ${mib(idle.rss)}`);
      assert.ok(child.stdin.writableLength > 0, 'requests the server did not read yet wait on the client side');

      child.stdout.resume(); // the client reads again
      await until('every request answered', () => answered >= total + 1 || unexpected !== '');
      const after = memory(pid);
      // The peak while draining is mostly garbage awaiting collection (it stays far lower under a small
      // --max-old-space-size), so it is reported, not asserted.
      t.diagnostic(
        `idle RSS ${mib(idle.rss)}; with stdout unread at most ${mib(stalledRss)}, ${answeredWhileStalled - WARMUP_REQUESTS - 1} of ${PIPELINED_REQUESTS} answered; peak RSS over the whole run ${mib(after.peak)}`,
      );
      assert.equal(unexpected, '', 'only tools/list results on stdout');
      assert.equal(answered, total + 1);
      assert.ok(
        answers.every((count) => count === 1),
        'each id exactly once',
      );

      child.stdin.end();
      await until('exit', () => child.exitCode !== null);
      assert.equal(child.exitCode, 0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
