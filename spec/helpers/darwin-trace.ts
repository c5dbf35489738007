/**
 * The darwin-emulated tier's judge of a trace (pure): which process made each file access, and whether one of
 * the server's or its supervisors' processes touched what macOS does not have.
 *
 * Attribution: every thread belongs to the process (thread group) that cloned it, and a process runs what it
 * last exec'd (a forked child runs its parent's program until its own execve). A process is the product's when
 * it is node running the product script (the spec bundle: the server, and each supervisor it starts as
 * `node <bundle> __supervisor`); the fake CLI, `ps` and every other program are not judged.
 *
 * The rule: a product process may not touch anything under /proc or /sys, save Node's own reads listed in
 * NODE_OWN_READS. That is stricter than the list of Linux-only uses (another process's /proc/<pid>,
 * /proc/self/{fd,fdinfo,mountinfo,ns,task,environ,cgroup}, ns_last_pid, cgroup files): on macOS none of /proc
 * or /sys exists, so any other read there is a Linux-only path. Node's own reads are told from the product's
 * by their moment and exact form: they are made during Node's start, before the process first touches a file
 * its command line names (the preload, the bundle), so no product code has run yet.
 *
 * A failed attempt counts as an access. `/dev/fd` is not judged: macOS has it too (fdescfs), though on Linux it
 * is a link to /proc/self/fd (docs/platforms.md).
 */
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callPaths } from './strace-paths.ts';
import { readString, readStringArray, resultNumber, type ParsedTrace, type Syscall, type UnreadLine } from './strace.ts';

/** One read Node makes itself on Linux, allowed in a product process: exactly this call on this path. */
export interface NodeOwnRead {
  readonly path: string | RegExp;
  readonly syscalls: readonly string[];
  /** Only during Node's start (before any script runs), or at any time. */
  readonly when: 'start' | 'any';
  readonly why: string;
}

const OPEN = ['openat', 'open'] as const;

/** Measured on Node 20.20 (Linux 6.18, a cgroup v1 memory controller beside the unified hierarchy): spec/README.md. */
export const NODE_OWN_READS: readonly NodeOwnRead[] = [
  {
    path: '/proc/self/cgroup',
    syscalls: OPEN,
    when: 'start',
    why: "libuv's uv_get_constrained_memory finds this process's cgroup; V8 sizes its heap by the limit",
  },
  {
    path: /^\/sys\/fs\/cgroup\/(?:[^/]+\/)*memory\.(?:max|high|limit_in_bytes|soft_limit_in_bytes)$/,
    syscalls: OPEN,
    when: 'start',
    why: 'the same probe reads the memory limit: memory.max and memory.high (v2), memory.limit_in_bytes and memory.soft_limit_in_bytes (v1)',
  },
  { path: '/proc/meminfo', syscalls: OPEN, when: 'start', why: "libuv's uv_get_total_memory, the heap's other bound" },
  {
    path: '/proc/self/maps',
    syscalls: OPEN,
    when: 'start',
    why: "glibc's pthread_getattr_np reads the process's own memory map for the main thread's stack (V8's stack bound)",
  },
  { path: '/proc/self/exe', syscalls: ['readlink'], when: 'start', why: "process.execPath: libuv's uv_exepath reads this link" },
  {
    path: '/proc/sys/vm/overcommit_memory',
    syscalls: OPEN,
    when: 'any',
    why: "glibc's malloc, once per process, when it first shrinks a thread arena's heap (check_may_shrink_heap): seen under memory pressure",
  },
];

export interface TraceRules {
  /** The product's script: a node process whose argv names it is judged. */
  readonly productScript: string;
  /** The platform preload: only the traced root process (the server) may open it. */
  readonly preload: string;
}

export interface ProductProcess {
  readonly pid: number;
  readonly argv: readonly string[];
}

export interface Violation {
  readonly line: number;
  readonly pid: number;
  readonly tid: number;
  readonly syscall: string;
  readonly path: string;
  /** Why it is forbidden: `another process's /proc/<pid>`, `/proc/self/fd`, `a cgroup file`, … */
  readonly rule: string;
  readonly argv: readonly string[];
}

export interface TraceVerdict {
  readonly rootPid: number | null;
  readonly rootArgv: readonly string[];
  /** Every product process, in the order each exec'd. */
  readonly products: readonly ProductProcess[];
  readonly violations: readonly Violation[];
  /** Lines the reader could not read (any would be a hole in the check). */
  readonly unread: readonly UnreadLine[];
  /** Threads that appeared with no clone seen for them (the reader missed something: a checker hole). */
  readonly unattributed: readonly number[];
  /** How many times each allowed Node read was seen in product processes (by its `path` as text). */
  readonly nodeReads: ReadonlyMap<string, number>;
}

interface ProcState {
  readonly pid: number;
  argv: readonly string[];
  product: boolean;
  phase: 'start' | 'running';
  /** The files its command line names; the first access to one ends Node's start. */
  named: ReadonlySet<string>;
  cwd: string | null;
}

/** Judges a parsed trace; `rules.productScript` and `rules.preload` are absolute paths. */
export function judgeTrace(trace: ParsedTrace, rules: TraceRules): TraceVerdict {
  const byTid = new Map<number, ProcState>();
  const products: ProductProcess[] = [];
  const violations: Violation[] = [];
  const unattributed: number[] = [];
  const nodeReads = new Map<string, number>();
  const unread: UnreadLine[] = [...trace.unread];
  const rootPid = trace.calls[0]?.tid ?? null;
  let rootArgv: readonly string[] = [];
  for (const call of trace.calls) {
    let proc = byTid.get(call.tid);
    if (proc === undefined) {
      if (call.tid !== rootPid) unattributed.push(call.tid);
      proc = { pid: call.tid, argv: [], product: false, phase: 'start', named: new Set(), cwd: null };
      byTid.set(call.tid, proc);
    }
    const called = callPaths(call, proc.cwd);
    proc.cwd = called.cwd;
    for (const access of called.paths) {
      if (access === rules.preload && proc.pid !== rootPid) {
        violations.push(violation(call, proc, access, 'the platform preload opened outside the server'));
      }
      if (!proc.product) continue;
      if (proc.phase === 'start' && proc.named.has(access)) proc.phase = 'running';
      const allowed = NODE_OWN_READS.find((r) => allows(r, call.name, access, proc.phase));
      if (allowed !== undefined) nodeReads.set(String(allowed.path), (nodeReads.get(String(allowed.path)) ?? 0) + 1);
      else {
        const rule = forbiddenRule(access, proc.pid, call.tid);
        if (rule !== null) violations.push(violation(call, proc, access, rule));
      }
    }
    if (call.name === 'chdir' && resultNumber(call.result) === 0) proc.cwd = called.paths[0] ?? null;
    if (!followProcess(call, proc, byTid, rules, products))
      unread.push({ line: call.line, text: `${call.name}: its argv was not printed whole` });
    if (call.tid === rootPid && rootArgv.length === 0 && proc.argv.length > 0) rootArgv = proc.argv;
  }
  return { rootPid, rootArgv, products, violations, unread, unattributed, nodeReads };
}

function violation(call: Syscall, proc: ProcState, path: string, rule: string): Violation {
  return { line: call.line, pid: proc.pid, tid: call.tid, syscall: call.name, path, rule, argv: proc.argv };
}

function allows(read: NodeOwnRead, syscall: string, path: string, phase: ProcState['phase']): boolean {
  if (read.when === 'start' && phase !== 'start') return false;
  if (!read.syscalls.includes(syscall)) return false;
  return typeof read.path === 'string' ? read.path === path : read.path.test(path);
}

/**
 * A clone registers its thread or process; a successful execve gives the process its new program. False when
 * an execve's argv cannot be read whole (it cannot be told whether the product runs).
 */
function followProcess(
  call: Syscall,
  proc: ProcState,
  byTid: Map<number, ProcState>,
  rules: TraceRules,
  products: ProductProcess[],
): boolean {
  if (['clone', 'clone3', 'fork', 'vfork'].includes(call.name)) {
    const child = resultNumber(call.result);
    if (child === null || child <= 0) return true;
    const thread = call.args.some((a) => /\bCLONE_THREAD\b/.test(a));
    byTid.set(child, thread ? proc : { ...proc, pid: child });
    return true;
  }
  if ((call.name === 'execve' || call.name === 'execveat') && resultNumber(call.result) === 0) {
    const argv = readStringArray(call.args[call.name === 'execve' ? 1 : 2] ?? '');
    if (argv === null) return false;
    const file = readString(call.args[call.name === 'execve' ? 0 : 1] ?? '')?.value ?? '';
    proc.argv = argv;
    proc.product = posix.basename(file).startsWith('node') && argv.slice(1).includes(rules.productScript);
    proc.phase = 'start';
    proc.named = new Set(
      argv
        .slice(1)
        .map(argPath)
        .filter((p) => p !== null),
    );
    if (proc.product) products.push({ pid: proc.pid, argv });
  }
  return true;
}

/** An argv element as the path Node would open: a file URL's path, an absolute path; else null. */
function argPath(arg: string): string | null {
  if (arg.startsWith('file://')) return fileURLToPath(arg);
  return arg.startsWith('/') ? posix.normalize(arg) : null;
}

/**
 * Why a path is forbidden to a product process (null: allowed). `/proc/self` and `/proc/thread-self` are read
 * as the process's own pid; a relative path whose directory the trace did not name is forbidden (unprovable).
 */
export function forbiddenRule(path: string, pid: number, tid: number): string | null {
  if (path.startsWith('(unknown directory)/')) return 'a relative path whose directory the trace does not name';
  if (path === '/sys' || path.startsWith('/sys/')) return path.startsWith('/sys/fs/cgroup') ? 'a cgroup file' : 'a /sys file';
  if (path !== '/proc' && !path.startsWith('/proc/')) return null;
  const parts = path.split('/').slice(2);
  const head = parts[0] ?? '';
  if (head === '') return 'the /proc listing';
  if (head === 'sys' && parts.join('/') === 'sys/kernel/ns_last_pid') return '/proc/sys/kernel/ns_last_pid';
  const own = head === 'self' || head === 'thread-self' || Number(head) === pid || Number(head) === tid;
  if (!/^\d+$/.test(head) && !own) return `/proc/${head}`;
  if (!own) return "another process's /proc/<pid>";
  const spelled = head === 'self' || head === 'thread-self' ? head : '<own pid>';
  return `/proc/${spelled}/${parts[1] ?? ''}`;
}

/** One line per kind of forbidden access (process role, call, path shape, rule), with its count and first trace line. */
export function describeViolations(verdict: TraceVerdict): string {
  const kinds = new Map<string, { count: number; first: number }>();
  for (const v of verdict.violations) {
    const role = v.pid === verdict.rootPid ? 'server' : v.argv.includes('__supervisor') ? 'supervisor' : `pid ${v.pid}`;
    const key = `${role}: ${v.syscall} ${shape(v)} (${v.rule})`;
    const kind = kinds.get(key) ?? { count: 0, first: v.line };
    kinds.set(key, { count: kind.count + 1, first: kind.first });
  }
  return [...kinds].map(([key, k]) => `${k.count} × ${key}, first at trace line ${k.first}`).join('\n');
}

/** The path with numbers and run-specific names folded, so repeats group. */
function shape(v: Violation): string {
  return v.path.replace(/\/\d+(?=\/|$)/g, '/<n>').replace(/claude-run-mcp-[\w-]+/g, 'claude-run-mcp-<id>');
}
