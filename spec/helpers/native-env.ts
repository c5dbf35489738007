/**
 * A throw-away world for one run of the real `claude` binary: its own HOME, working directory and
 * temp folder under one root, and an environment that reaches only the fake API.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, readlink, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pollUntil, PollTimeoutError } from './poll.ts';

export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** Marks every process started from a sandbox env, so leak checks find its whole tree. */
export const SANDBOX_TAG_VAR = 'CLAUDE_RUN_MCP_SANDBOX';
/** Enough for the CLI and its Bash tool; nothing from the host's PATH leaks in. */
export const MINIMAL_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The four switches that keep the CLI off every host but the base URL (with these four set, strace of 2.1.332 shows connects to the base URL only and no DNS lookups). */
export const TRAFFIC_OFF_ENV = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_ERROR_REPORTING: '1',
} as const;

export interface NativeSandboxOptions {
  /** ANTHROPIC_BASE_URL, normally the fake's `url`. */
  readonly baseUrl: string;
  /** CLAUDE_CODE_MAX_RETRIES; default 0 (the CLI's own default holds an API error ~3 minutes). null leaves it unset. */
  readonly maxRetries?: number | null;
  /** Extra request headers, sent by the CLI via ANTHROPIC_CUSTOM_HEADERS ("Name: value" lines). */
  readonly customHeaders?: readonly string[];
  /** Added last; wins over everything above. */
  readonly extraEnv?: Readonly<Record<string, string>>;
}

export interface NativeSandbox {
  /** Realpaths (the CLI encodes realpath(cwd) into its project folder name). */
  readonly root: string;
  readonly home: string;
  readonly cwd: string;
  readonly tmp: string;
  readonly apiKey: string;
  readonly tag: string;
  readonly env: Record<string, string>;
  /** Live processes started from this sandbox (by tag, HOME or cwd), excluding the test process. */
  processes(): Promise<SandboxProcess[]>;
  /** Removes the whole tree. Idempotent. */
  cleanup(): Promise<void>;
}

export async function createNativeSandbox(opts: NativeSandboxOptions): Promise<NativeSandbox> {
  // Short: the sandbox's tmp is the native's TMPDIR, under which its own messaging socket
  // (<TMPDIR>/cc-socks/<pid>.sock, measured on 2.1.332) must fit the 107 bytes of a Unix socket path.
  const root = await realpath(await mkdtemp(join(tmpdir(), 'n-')));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  const tmp = join(root, 'tmp');
  await Promise.all([home, cwd, tmp].map((dir) => mkdir(dir)));
  const tag = randomBytes(8).toString('hex');
  const apiKey = `sk-ant-fake-${tag}`;
  const env: Record<string, string> = {
    PATH: MINIMAL_PATH,
    HOME: home,
    TMPDIR: tmp,
    CLAUDE_CODE_TMPDIR: tmp,
    LANG: 'C.UTF-8',
    ANTHROPIC_BASE_URL: opts.baseUrl,
    ANTHROPIC_API_KEY: apiKey,
    ...TRAFFIC_OFF_ENV,
    [SANDBOX_TAG_VAR]: tag,
  };
  const maxRetries = opts.maxRetries === undefined ? 0 : opts.maxRetries;
  if (maxRetries !== null) env['CLAUDE_CODE_MAX_RETRIES'] = String(maxRetries);
  if (opts.customHeaders && opts.customHeaders.length > 0) env['ANTHROPIC_CUSTOM_HEADERS'] = opts.customHeaders.join('\n');
  Object.assign(env, opts.extraEnv ?? {});

  let removed: Promise<void> | undefined;
  return {
    root,
    home,
    cwd,
    tmp,
    apiKey,
    tag,
    env,
    processes: () =>
      findProcesses({
        tag: `${SANDBOX_TAG_VAR}=${tag}`,
        home: `HOME=${home}`,
        root,
        excludePid: process.pid,
        binary: realClaudeBin(),
      }),
    cleanup() {
      removed ??= rm(root, { recursive: true, force: true, maxRetries: 3 });
      return removed;
    },
  };
}

/** Absolute realpath of the repo's pinned binary (node_modules/.bin/claude → the native ELF). */
export function realClaudeBin(): string {
  const link = join(REPO_ROOT, 'node_modules', '.bin', 'claude');
  if (!existsSync(link)) throw new Error(`real claude binary missing at ${link}: run npm ci`);
  return realpathSync(link);
}

// Leak checks: live processes that belong to a sandbox, found by scanning /proc (Linux only).

export interface SandboxProcess {
  readonly pid: number;
  /** Target of /proc/<pid>/exe, or null when unreadable (zombie, gone, kernel thread). */
  readonly exe: string | null;
  readonly cmdline: readonly string[];
  /** /proc/<pid>/exe is the same file (device and inode) as the binary asked about. */
  readonly isBinary: boolean;
}

export interface ProcessMatch {
  /** Exact `NAME=value` environ entries; a process carrying any of them matches. */
  readonly tag: string;
  readonly home: string;
  /** A process whose cwd is this folder or below matches too. */
  readonly root: string;
  readonly excludePid: number;
  /** Sets `isBinary` by comparing device and inode with this file. */
  readonly binary?: string;
}

export const POLL_INTERVAL_MS = 50;

export async function findProcesses(match: ProcessMatch): Promise<SandboxProcess[]> {
  const binaryId = match.binary === undefined ? undefined : await fileId(match.binary);
  const found: SandboxProcess[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === match.excludePid) continue;
    const environ = await readOrNull(`/proc/${pid}/environ`);
    const cwd = await linkOrNull(`/proc/${pid}/cwd`);
    const entries = environ === null ? [] : environ.split('\0');
    const inRoot = cwd !== null && (cwd === match.root || cwd.startsWith(`${match.root}/`));
    if (!inRoot && !entries.includes(match.tag) && !entries.includes(match.home)) continue;
    const cmdline = (await readOrNull(`/proc/${pid}/cmdline`)) ?? '';
    const exeId = await fileId(`/proc/${pid}/exe`);
    found.push({
      pid,
      exe: await linkOrNull(`/proc/${pid}/exe`),
      cmdline: cmdline.split('\0').filter((part) => part !== ''),
      isBinary: binaryId !== undefined && exeId === binaryId,
    });
  }
  return found;
}

/** Polls until `list()` is empty or `timeoutMs` passes; returns what is still there (empty = all gone). */
export async function pollUntilGone(list: () => Promise<SandboxProcess[]>, timeoutMs: number): Promise<SandboxProcess[]> {
  let left: SandboxProcess[] = [];
  try {
    await pollUntil(
      'sandbox processes gone',
      async () => {
        left = await list();
        return left.length === 0;
      },
      { timeoutMs, intervalMs: POLL_INTERVAL_MS },
    );
    return [];
  } catch (error) {
    if (error instanceof PollTimeoutError) return left;
    throw error;
  }
}

async function fileId(path: string): Promise<string | undefined> {
  try {
    const info = await stat(path);
    return `${info.dev}:${info.ino}`;
  } catch {
    return undefined;
  }
}

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

async function linkOrNull(path: string): Promise<string | null> {
  try {
    return await readlink(path);
  } catch {
    return null;
  }
}
