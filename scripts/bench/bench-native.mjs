#!/usr/bin/env node
// A stand-in `claude` for the benchmarks (dev-only): realistic stream-json partial-message events at full
// speed or paced. Plain JS so it starts like any small node CLI. The mode is the prompt (the argv after --):
//   file:<path>            stream the bytes of <path> (made by --write-flood) to stdout, then a final result
//   timed:<ms>             generate turns at full speed for <ms>, then a final result
//   paced:<count>:<ms>     one text delta every <ms>; its text carries the CLOCK_MONOTONIC write time
//   fill:<finalBytes>[:<n>] enough ~1 KiB events to fill the event ring (or <n> of them), then a final
//                          result of that size
// Also: `--version`, and `--write-flood <path> <bytes>` (writes the flood file, no run).
import { randomUUID } from 'node:crypto';
import { createReadStream, writeFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const SESSION = randomUUID();
const mono = () => Number(process.hrtime.bigint()) / 1e6;

const base = () => ({ session_id: SESSION, parent_tool_use_id: null, uuid: randomUUID() });
const delta = (text, msg) => ({
  type: 'stream_event',
  event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
  ...base(),
  api_message_id: msg,
});
const stream = (event, msg) => ({ type: 'stream_event', event, ...base(), api_message_id: msg });
const usage = {
  input_tokens: 12257,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  output_tokens: 6,
  service_tier: 'standard',
};
const init = () => ({
  type: 'system',
  subtype: 'init',
  cwd: process.cwd(),
  ...base(),
  tools: ['Task', 'Bash', 'Edit', 'Read', 'Write'],
  mcp_servers: [],
  model: 'claude-opus-5-5',
  permissionMode: 'dontAsk',
  apiKeySource: 'ANTHROPIC_API_KEY',
  claude_code_version: '2.1.332',
});
const result = (text) => ({
  type: 'result',
  subtype: 'success',
  is_error: false,
  api_error_status: null,
  duration_ms: 187,
  duration_api_ms: 49,
  num_turns: 1,
  result: text,
  stop_reason: 'end_turn',
  terminal_reason: 'completed',
  ...base(),
  total_cost_usd: 0.049148,
  usage,
  modelUsage: {},
  permission_denials: [],
});
const WORDS = 'the adapter relays every partial message of the model as one line of stream json and keeps a bounded ring'.split(' ');

/** One assistant turn of `deltas` text deltas, as newline-terminated JSON. */
function turn(n, deltas) {
  const msg = `msg_bench_${n}`;
  const lines = [
    stream(
      { type: 'message_start', message: { id: msg, type: 'message', role: 'assistant', model: 'claude-opus-5-5', content: [], usage } },
      msg,
    ),
  ];
  lines.push(stream({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, msg));
  let text = '';
  for (let i = 0; i < deltas; i++) {
    const piece = `${WORDS[(n + i) % WORDS.length]} ${WORDS[(n * 7 + i) % WORDS.length]} `;
    text += piece;
    lines.push(delta(piece, msg));
  }
  lines.push({
    type: 'assistant',
    message: {
      id: msg,
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-5-5',
      content: [{ type: 'text', text }],
      stop_reason: null,
      usage,
    },
    ...base(),
  });
  lines.push(
    stream({ type: 'content_block_stop', index: 0 }, msg),
    stream({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 6 } }, msg),
    stream({ type: 'message_stop' }, msg),
  );
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

function floodBytes(bytes) {
  const parts = [JSON.stringify(init()) + '\n'];
  let size = parts[0].length;
  for (let n = 0; size < bytes; n++) {
    const t = turn(n, 200);
    parts.push(t);
    size += Buffer.byteLength(t);
  }
  return parts.join('');
}

const write = (text) =>
  new Promise((resolve) => {
    if (process.stdout.write(text)) resolve();
    else process.stdout.once('drain', resolve);
  });
const finish = (code) => {
  process.stdout.write('', () => process.exit(code));
};

async function main() {
  if (argv.includes('--version')) return void process.stdout.write('2.1.332 (Claude Code)\n');
  const wf = argv.indexOf('--write-flood');
  if (wf >= 0) return void writeFileSync(argv[wf + 1], floodBytes(Number(argv[wf + 2])));
  const dash = argv.indexOf('--');
  const [mode, a = '', b = ''] = (dash >= 0 ? argv.slice(dash + 1).join(' ') : '').split(':');
  switch (mode) {
    case 'file': {
      process.stderr.write(`bench-start ${mono()}\n`);
      await new Promise((resolve, reject) => {
        const input = createReadStream(a, { highWaterMark: 64 * 1024 });
        input.on('error', reject);
        input.on('end', resolve);
        input.pipe(process.stdout, { end: false });
      });
      await write(JSON.stringify(result('flooded')) + '\n');
      return finish(0);
    }
    case 'timed': {
      process.stderr.write(`bench-start ${mono()}\n`);
      await write(JSON.stringify(init()) + '\n');
      const chunk = floodBytes(1024 * 1024).slice(JSON.stringify(init()).length + 1);
      for (const end = mono() + Number(a); mono() < end;) await write(chunk);
      await write(JSON.stringify(result('flooded')) + '\n');
      return finish(0);
    }
    case 'paced': {
      await write(JSON.stringify(init()) + '\n');
      for (let i = 0; i < Number(a); i++) {
        await new Promise((resolve) => setTimeout(resolve, Number(b)));
        await write(JSON.stringify(delta(`@${mono().toFixed(4)}@`, 'msg_paced')) + '\n');
      }
      await write(JSON.stringify(result('paced')) + '\n');
      return finish(0);
    }
    case 'fill': {
      await write(JSON.stringify(init()) + '\n');
      const filler = 'x'.repeat(800);
      for (let i = 0; i < (b === '' ? 300 : Number(b)); i++) await write(JSON.stringify(delta(filler, 'msg_fill')) + '\n');
      const empty = JSON.stringify(result('')).length;
      await write(JSON.stringify(result('y'.repeat(Math.max(0, Number(a) - empty - 1)))) + '\n');
      return finish(0);
    }
    default:
      process.stderr.write(`bench-native: unknown mode ${String(mode)}\n`);
      return finish(2);
  }
}

main();
