#!/usr/bin/env node
// Runs a command inside a fresh network namespace where only loopback is up, so nothing a test
// starts (the real claude binary included) can reach any host but 127.0.0.1.
// Usage: node scripts/netns-run.mjs [--require] -- <command> [args...]
// Without unshare (or without the right to use it) the command runs unisolated with a warning,
// unless --require is given; the child sees CLAUDE_RUN_MCP_NETNS=1 (isolated) or 0 (not).
// Argument arrays only: no shell anywhere.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NETNS_ENV_VAR = 'CLAUDE_RUN_MCP_NETNS';
const PROBE_TIMEOUT_MS = 10_000;
const self = fileURLToPath(import.meta.url);

const argv = process.argv.slice(2);
const dashes = argv.indexOf('--');
if (dashes < 0 || dashes === argv.length - 1) {
  console.error('usage: node scripts/netns-run.mjs [--require] -- <command> [args...]');
  process.exit(2);
}
const flags = argv.slice(0, dashes);
const command = argv.slice(dashes + 1);

/** Interface names this process sees; /proc/net is per network namespace (unlike /sys/class/net). */
function interfaces() {
  return readFileSync('/proc/net/dev', 'utf8')
    .split('\n')
    .slice(2)
    .map((line) => line.split(':')[0]?.trim() ?? '')
    .filter((name) => name !== '');
}

function findIp() {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin', '/usr/bin', '/bin'];
  for (const dir of dirs) if (dir !== '' && existsSync(join(dir, 'ip'))) return join(dir, 'ip');
  return undefined;
}

function run(cmd, args, env) {
  const child = spawn(cmd, args, { stdio: 'inherit', env });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    console.error(`netns-run: cannot start ${cmd}: ${error.message}`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (signalNumber(signal) ?? 1) : 1)));
}

function signalNumber(signal) {
  return { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal];
}

if (flags.includes('--inner')) {
  // Inside the new namespace: loopback starts DOWN, so 127.0.0.1 connects fail until it is up.
  const ip = findIp();
  const up = ip ? spawnSync(ip, ['link', 'set', 'lo', 'up'], { stdio: 'inherit' }) : undefined;
  const names = interfaces();
  if (!up || up.status !== 0 || names.join(',') !== 'lo') {
    console.error(`netns-run: could not bring up loopback in the namespace (interfaces: ${names.join(',')})`);
    process.exit(2);
  }
  run(command[0], command.slice(1), { ...process.env, [NETNS_ENV_VAR]: '1' });
} else if (process.env[NETNS_ENV_VAR] === '1' && interfaces().join(',') === 'lo') {
  run(command[0], command.slice(1), process.env);
} else {
  const ip = findIp();
  // Root can unshare directly; otherwise a user namespace may grant it (unprivileged userns).
  const attempts = [['--net'], ['--net', '--map-root-user']];
  let why = ip === undefined ? 'no ip command' : 'unshare refused';
  const works =
    ip === undefined
      ? undefined
      : attempts.find((prefix) => {
          const probe = spawnSync('unshare', [...prefix, '--', ip, 'link', 'set', 'lo', 'up'], {
            stdio: 'ignore',
            timeout: PROBE_TIMEOUT_MS,
          });
          if (probe.error?.code === 'ENOENT') why = 'no unshare command';
          return probe.status === 0;
        });
  if (works) {
    run('unshare', [...works, '--', process.execPath, self, '--inner', '--', ...command], process.env);
  } else if (flags.includes('--require')) {
    console.error(`netns-run: no network namespace available (${why}) and --require was given`);
    process.exit(2);
  } else {
    console.error(
      `netns-run: no network namespace available (${why}); running WITHOUT network isolation (the fake API is loopback-only and the CLI's non-essential traffic is disabled)`,
    );
    run(command[0], command.slice(1), { ...process.env, [NETNS_ENV_VAR]: '0' });
  }
}
