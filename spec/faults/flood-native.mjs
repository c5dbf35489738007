#!/usr/bin/env node
// A native stand-in for the stalled-client fault: FLOOD_EVENTS text deltas of about 900 characters each at
// full speed (so each progress message is near its 1 KiB cap), then a small final result. `--version` answers.
const argv = process.argv.slice(2);
if (argv.includes('--version')) {
  process.stdout.write('2.1.332 (Claude Code)\n');
} else {
  const session = '6f1d3c8e-2b4a-4c5d-9e8f-0a1b2c3d4e5f';
  const line = (event) => `${JSON.stringify({ ...event, session_id: session })}\n`;
  const text = 'lorem ipsum dolor sit amet '.repeat(34);
  const delta = line({
    type: 'stream_event',
    event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    parent_tool_use_id: null,
  });
  const total = Number(process.env.FLOOD_EVENTS || '50000');
  let sent = 0;
  const pump = () => {
    while (sent < total) {
      sent++;
      if (!process.stdout.write(delta)) return void process.stdout.once('drain', pump);
    }
    process.stdout.write(line({ type: 'result', subtype: 'success', is_error: false, result: 'flooded', num_turns: 1 }), () =>
      process.exit(0),
    );
  };
  process.stdout.write(line({ type: 'system', subtype: 'init', model: 'claude-opus-5-5', cwd: process.cwd() }));
  pump();
}
