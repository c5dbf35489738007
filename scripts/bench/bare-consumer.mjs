#!/usr/bin/env node
// The comparison point of the ingestion benchmark (dev-only): spawns the native stand-in directly and does
// only the bare minimum with its stdout, a byte-level line splitter and JSON.parse per line.
// Usage: node bare-consumer.mjs <native> <args...>   Prints {"bytes","events","startedAt","doneAt"} (CLOCK_MONOTONIC ms).
import { spawn } from 'node:child_process';

const [file, ...args] = process.argv.slice(2);
const mono = () => Number(process.hrtime.bigint()) / 1e6;
const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
let carry = null;
let bytes = 0;
let events = 0;
let stderr = '';
child.stderr.setEncoding('utf8');
child.stderr.on('data', (c) => {
  stderr += c;
});
child.stdout.on('data', (chunk) => {
  bytes += chunk.length;
  let buf = carry === null ? chunk : Buffer.concat([carry, chunk]);
  let start = 0;
  for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
    if (nl > start) {
      JSON.parse(buf.toString('utf8', start, nl));
      events++;
    }
    start = nl + 1;
  }
  carry = start < buf.length ? buf.subarray(start) : null;
});
child.stdout.on('end', () => {
  const doneAt = mono();
  const startedAt = Number(/bench-start (\S+)/.exec(stderr)?.[1]);
  process.stdout.write(JSON.stringify({ bytes, events, startedAt, doneAt }) + '\n');
});
