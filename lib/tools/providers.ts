/**
 * Composes the tool and resource providers of one adapter process from its configuration: the cli-tree
 * contract, the run runtime, the tool catalog and the resources. Effects (spawn, fs, clock, randomness)
 * are wired here and nowhere deeper.
 */
import { isDirectory } from '../util/is-directory.ts';
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CallContext, Providers, ToolProvider } from '../contracts/providers.ts';
import type { JsonObject } from '../util/json.ts';
import { systemClock, type Clock } from '../util/clock.ts';
import { CLI_TREE, getNativeArgNames, type CliTree } from '../native/tree.ts';
import { getNativeOptionSchemas } from '../native/schema-gen.ts';
import { buildNativeArgv } from '../native/argv.ts';
import { resolveNativeBinary } from '../native/resolve-bin.ts';
import { assertNativeVersion, MAX_VERSION_STDOUT_BYTES, VERSION_TIMEOUT_MS } from '../native/version.ts';
import { getNativeEnv, isRecursiveLaunch } from '../native/native-env.ts';
import { getProjectDir, listTranscriptIds, type TranscriptDirReader } from '../native/transcripts.ts';
import { createSessionLock } from '../runs/session-lock.ts';
import { createWorkSnapshotReader } from '../runs/work-snapshot.ts';
import type { ExecuteDeps, PreparedRun } from '../runs/execute.ts';
import { prepareSupervisor } from '../supervisor/parent/run-supervised.ts';
import { cleanupBackendFor, type CleanupBackend, type CleanupBackendOption } from '../supervisor/parent/cleanup-backend.ts';
import { createSparePool, type PrepareFn, type SparePool } from '../supervisor/parent/spare.ts';
import { readProcStat } from '../process/proc-table.ts';
import { supportedPlatform, type SupportedPlatform } from '../process/platform.ts';
import { pidPresence, pidPresenceBySignal, processesWithCwd, processesWithCwdUnverifiable } from '../process/occupants.ts';
import { isGoneIn } from '../process/proc-stat.ts';
import { ToolError } from '../tool-errors.ts';
import { ADAPTER_VERSION } from '../version.ts';
import { buildCatalog } from './catalog.ts';
import { describeCapabilities } from './capabilities.ts';
import { fromWireName } from './declarations.ts';
import { callTool, settledRunOutcome } from './call-tool.ts';
import { wireRunRecords } from './state-wiring.ts';
import type { RunRecords } from './run-records.ts';
import type { RunEntry } from '../runs/registry.ts';
import type { LiveRun } from './run-result.ts';
import { parseRunInput } from './run-input.ts';
import { DEFAULT_MAX_OPEN_IDLE_SECONDS } from './open-input.ts';
import { createRuntime, type Runtime } from './runtime.ts';
import { createTaskProvider } from './tasks.ts';
import { createBudgetLedger, type BudgetLedger } from '../runs/budget.ts';
import { BUDGET_OPTION_ARG, withBudget } from './budget-gate.ts';
import { createResourceProvider } from './resources.ts';
import { createGitRunner, createGitRunnerSync, type GitRunnerSync, type OwnedGitRunner } from '../worktree/git.ts';
import { checkWorktreeRequest } from '../worktree/worktree.ts';
import { inspectWorktree } from '../worktree/changes.ts';
import { removeWorktree, type WorktreeProcesses } from '../worktree/remove.ts';
import { countFileLines, describeGit, type GitAvailability } from '../worktree/fs-edge.ts';

export interface ProviderConfig {
  readonly claudeBin: string | null;
  readonly maxTimeoutSeconds: number;
  /** The largest open_idle_seconds a keep_open run may ask for (default DEFAULT_MAX_OPEN_IDLE_SECONDS). */
  readonly maxOpenIdleSeconds?: number;
  readonly underscoreNames: boolean;
  readonly promptViaStdin: boolean;
  /** The adapter's environment (the native environment derives from it). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Default cwd of runs, and the base of a relative --claude-bin. */
  readonly cwd: string;
  readonly clock?: Clock;
  readonly tree?: CliTree;
  readonly versionTimeoutMs?: number;
  readonly supervision?: ExecuteDeps['supervision'];
  /**
   * How cleanup is proven: 'auto' (a cgroup of each run's own where one can be had, else /proc tracking),
   * 'cgroup' (refuse to start without it: createProviders throws CleanupBackendUnavailable), 'process_scan'.
   */
  readonly cleanupBackend?: CleanupBackendOption;
  /** The platform decision (lib/process/platform.ts), made once by the role or library that composes this. */
  readonly platform?: SupportedPlatform;
  /** The operator's budget in dollars: the cap on the total reported cost of the runs started; null: none. */
  readonly budgetUsd?: number | null;
  /** The state directory for the runs' records (--state-dir); null or absent: the platform's default. */
  readonly stateDir?: string | null;
  /** Keep one idle supervisor warm for the next run (the stdio server does; the library does not). */
  readonly spareSupervisor?: boolean;
  /** Operator log (stderr in the stdio server). */
  readonly log?: (line: string) => void;
  /**
   * Called once, at the first tools/list or tools/call (after the handshake, before any run): the stdio
   * server sets its heap up there (lib/cli/heap.ts), out of the way of `initialize`.
   */
  readonly onFirstUse?: () => void;
}

export type { Providers };

/** The tool providers, and what only they know: the idle spare supervisor's pid (accounting, the bench). */
export interface ToolProviders extends Providers {
  /** The idle spare supervisor's pid, or null (none, or spareSupervisor is off). */
  readonly sparePid: () => number | null;
}

/**
 * What the providers of one process share: the configuration's derived parts, chosen once, and the few facts
 * learnt while serving (the asserted version, git's availability, the first use, the instance id).
 */
interface ProviderParts {
  readonly config: ProviderConfig;
  readonly clock: Clock;
  readonly tree: CliTree;
  readonly nativeArgNames: ReturnType<typeof getNativeArgNames>;
  readonly nativeEnv: Record<string, string>;
  readonly recursive: boolean;
  readonly versionTimeoutMs: number;
  readonly platform: SupportedPlatform;
  readonly cleanup: CleanupBackend;
  /** Runs that were to have a cgroup and were tracked through /proc instead (the capabilities count them). */
  readonly fallbacks: { runs: number };
  readonly prepareWithin: PrepareFn;
  readonly spares: SparePool | null;
  readonly git: OwnedGitRunner;
  readonly gitSync: GitRunnerSync;
  readonly ledger: BudgetLedger | null;
  /** The version the newest check asserted; null before the first. */
  assertedVersion: string | null;
  /** Asked once per process, at the first capabilities read. */
  gitAvailability: GitAvailability | null;
  /** The onFirstUse hook until it ran. */
  firstUse: (() => void) | undefined;
  instanceId: string | null;
  /** The runs' records in the state directory (lib/tools/run-records.ts). */
  readonly records: RunRecords;
  /** The runtime, once composed (a settled run's record holds its outcome, which the runtime builds). */
  runtime: Runtime | null;
}

export function createProviders(config: ProviderConfig): ToolProviders {
  const p = createParts(config);
  const runtime = createProviderRuntime(p);
  p.runtime = runtime;
  const budgeted = withBudget(runtime, p.ledger, (prepared, capUsd) => withCap(p, prepared, capUsd));
  const prepare = (args: JsonObject): PreparedRun => prepareRun(p, runtime, args);
  const toolProvider = createToolProvider(p, budgeted, prepare);
  const resourceProvider = createResourceProvider({
    work: createWorkSnapshotReader(runtime.registry, () => instanceId(p)),
    capabilities: () => getCapabilities(p),
  });
  const { spares, git } = p;
  return {
    toolProvider,
    resourceProvider,
    // Git calls still running when the server leaves (an inspection past its bound, a removal) are ended,
    // not left behind: their process groups are SIGKILLed, and no call starts after.
    close: async () => {
      p.records.exiting(unsettled(runtime));
      await runtime.close();
      git.stop();
      await spares?.close();
    },
    stop: () => {
      // Written before the ends start: a later server can then say these runs ended with this one.
      p.records.exiting(unsettled(runtime));
      runtime.stop();
      git.stop();
      spares?.stop();
    },
    sparePid: () => spares?.sparePid() ?? null,
  };
}

function createParts(config: ProviderConfig): ProviderParts {
  const clock = config.clock ?? systemClock;
  const platform = config.platform ?? supportedPlatform();
  const records = wireRunRecords({
    // A relative --state-dir is the server's working directory's, as a relative --claude-bin is.
    stateDir: config.stateDir == null ? null : resolve(config.cwd, config.stateDir),
    platform,
    env: config.env,
    clock,
    log: config.log ?? (() => {}),
    instance: () => instanceId(p),
    outcomeOf: (entry) => settledRunOutcome(p.runtime!, entry),
  });
  // Off the path of the first request: the records past their bounds.
  if (!isRecursiveLaunch(config.env)) setImmediate(() => records.sweep());
  const tree = config.tree ?? CLI_TREE;
  const nativeArgNames = getNativeArgNames(tree);
  const nativeEnv = getNativeEnv(config.env, ADAPTER_VERSION);
  const recursive = isRecursiveLaunch(config.env);
  const versionTimeoutMs = config.versionTimeoutMs ?? VERSION_TIMEOUT_MS;
  // Chosen once, before any run: a forced backend that cannot be had fails here, not in the middle of a run.
  const cleanup: CleanupBackend = cleanupBackendFor(config.cleanupBackend ?? 'auto', platform, config.log);
  const fallbacks = { runs: 0 };
  const onFallback = (): void => {
    fallbacks.runs++;
  };
  const prepareWithin: PrepareFn = (command) => prepareSupervisor(command, { cleanup, platform, onFallback });
  const spares = createSpares(config, { tree, nativeEnv, recursive, versionTimeoutMs, prepareWithin });
  const gitOptions = { env: config.env };
  const p: ProviderParts = {
    config,
    clock,
    tree,
    nativeArgNames,
    nativeEnv,
    recursive,
    versionTimeoutMs,
    platform,
    cleanup,
    fallbacks,
    prepareWithin,
    spares,
    git: createGitRunner(gitOptions),
    gitSync: createGitRunnerSync(gitOptions),
    ledger: config.budgetUsd == null ? null : createBudgetLedger(config.budgetUsd),
    assertedVersion: null,
    gitAvailability: null,
    firstUse: config.onFirstUse,
    instanceId: null,
    records,
    runtime: null,
  };
  return p;
}

/**
 * Each spare checks the binary's version while it waits, so a run finds the answer ready (bound to the
 * file's identity, lib/supervisor/parent/spare.ts). A copy started inside a run of its own runs nothing,
 * so it keeps no spare either.
 */
function createSpares(
  config: ProviderConfig,
  parts: Pick<ProviderParts, 'tree' | 'nativeEnv' | 'recursive' | 'versionTimeoutMs' | 'prepareWithin'>,
): SparePool | null {
  if (config.spareSupervisor !== true || parts.recursive) return null;
  const { tree, nativeEnv, versionTimeoutMs } = parts;
  return createSparePool(parts.prepareWithin, {
    ...(config.supervision?.supervisorCommand ? { command: config.supervision.supervisorCommand } : {}),
    earlyProbe: () => ({
      file: resolveBin(config),
      args: tree.native.version_args,
      cwd: config.cwd,
      env: nativeEnv,
      timeoutMs: versionTimeoutMs,
      maxStdoutBytes: MAX_VERSION_STDOUT_BYTES,
    }),
  });
}

function resolveBin(config: ProviderConfig): string {
  return resolveNativeBinary({ cliFlag: config.claudeBin ?? undefined, env: config.env, cwd: config.cwd });
}

function createProviderRuntime(p: ProviderParts): Runtime {
  const { config, tree, git } = p;
  return createRuntime({
    clock: p.clock,
    instance: () => instanceId(p),
    records: p.records,
    inspectWorktree: (place) => inspectWorktree({ git, countLines: countFileLines, clock: p.clock }, place),
    // node:crypto is loaded at first use, not at composition (docs/benchmarks.md, cold start).
    random: (n) => process.getBuiltinModule('node:crypto').randomBytes(n),
    checkVersion: async (bin, query) => {
      const { version } = await assertNativeVersion({ bin, tree, timeoutMs: p.versionTimeoutMs, query });
      p.assertedVersion = version;
    },
    prepareSupervisor: p.spares === null ? p.prepareWithin : p.spares.take,
    isGone: (identity) => {
      // Off Linux no start time can be read synchronously: gone only when no process has that pid at all.
      if (p.platform !== 'linux') return pidPresenceBySignal(identity.pid) === 'gone';
      return isGoneIn(identity, readProcStat(identity.pid));
    },
    sessionLock: createSessionLock(),
    listSessionIds: (cwd) => listSessionIds(config.env, cwd),
    nativeEnv: p.nativeEnv,
    askHost: {
      promptTool: tree.stdin_channel.permission_prompt_tool,
    },
    ...(config.supervision ? { supervision: config.supervision } : {}),
  });
}

function createToolProvider(p: ProviderParts, budgeted: Runtime, prepare: (args: JsonObject) => PreparedRun): ToolProvider {
  const { config, git, spares } = p;
  const catalog = buildCatalog({
    nativeProperties: getNativeOptionSchemas(p.tree),
    maxTimeoutSeconds: config.maxTimeoutSeconds,
    maxOpenIdleSeconds: config.maxOpenIdleSeconds ?? DEFAULT_MAX_OPEN_IDLE_SECONDS,
    underscoreNames: config.underscoreNames,
  });
  return {
    // The first listing follows the handshake: the spare boots then, never in the way of `initialize`.
    list: () => {
      markUsed(p);
      spares?.warm();
      return catalog;
    },
    call: (name: string, args: JsonObject, ctx: CallContext) => {
      markUsed(p);
      const tool = fromWireName(name, config.underscoreNames);
      if (tool === null) return Promise.reject(new Error('unknown tool'));
      return callTool(tool, args, ctx, {
        runtime: budgeted,
        prepare,
        removeWorktree: (request) => removeWorktree({ git, processes: worktreeProcesses(p.platform), exists: existsSync }, request),
        past: (runId) => p.records.past(runId),
      });
    },
    tasks: createTaskProvider({
      runtime: budgeted,
      prepare,
      clock: p.clock,
      underscoreNames: config.underscoreNames,
      past: (runId) => p.records.past(runId),
    }),
  };
}

/** Who works in a worktree: /proc on Linux; on darwin occupancy is unverifiable and a lock's pid is asked by signal 0. */
function worktreeProcesses(platform: SupportedPlatform): WorktreeProcesses {
  return platform === 'linux'
    ? { withCwd: processesWithCwd, pidPresence }
    : { withCwd: processesWithCwdUnverifiable, pidPresence: (pid) => pidPresenceBySignal(pid) };
}

function markUsed(p: ProviderParts): void {
  const hook = p.firstUse;
  p.firstUse = undefined;
  hook?.();
}

function prepareRun(p: ProviderParts, runtime: Runtime, args: JsonObject): PreparedRun {
  const { config } = p;
  if (p.recursive)
    throw new ToolError('recursion_refused', 'This adapter was started inside a run of its own (recursion sentinel set); it runs nothing.');
  const request = parseRunInput(args, {
    nativeArgNames: p.nativeArgNames,
    defaultCwd: config.cwd,
    isDirectory,
    maxOpenIdleSeconds: config.maxOpenIdleSeconds ?? DEFAULT_MAX_OPEN_IDLE_SECONDS,
  });
  let cwd: string;
  try {
    cwd = realpathSync(request.cwd);
  } catch {
    throw new ToolError('invalid_arguments', 'cwd must name an existing directory', '/cwd');
  }
  if (request.session.kind === 'new') refuseExistingSession(config, runtime, request.session.sessionId, cwd);
  const name = request.nativeOptions['worktree'];
  const worktree = typeof name === 'string' ? checkWorktreeRequest(p.gitSync, cwd, name, existsSync) : null;
  const argv = argvOf(p, request);
  const bin = resolveBin(config);
  return { request: { ...request, cwd, worktree }, bin, argv };
}

/**
 * The natural mistake is passing a returned session_id back as session_id (which means "start a NEW
 * conversation with this id"): refuse it before anything is spawned, naming the argument that resumes.
 * Known: a saved conversation a retained run of this adapter reported, or a transcript in the run's cwd.
 */
function refuseExistingSession(config: ProviderConfig, runtime: Runtime, sessionId: string, cwd: string): void {
  const projectDir = getProjectDir(config.env, cwd);
  const saved = (run: { run_id: string; session_id: string | null }): boolean =>
    run.session_id === sessionId && runtime.registry.get(run.run_id).live.request.nativeOptions['no_session_persistence'] !== true;
  const known = runtime.list().some(saved) || (projectDir !== null && existsSync(join(projectDir, `${sessionId}.jsonl`)));
  if (known) {
    throw new ToolError(
      'session_id_in_use',
      'session_id names an existing conversation; to continue it, pass the same id as resume_session_id (session_id only starts a new conversation)',
      '/session_id',
    );
  }
}

function argvOf(p: ProviderParts, request: PreparedRun['request']): PreparedRun['argv'] {
  return buildNativeArgv({
    tree: p.tree,
    outputMode: 'stream-json',
    permissionMode: request.permissionMode,
    options: request.nativeOptions,
    prompt: request.prompt,
  });
}

/** The budget's grant replaces the caller's max_budget_usd (the grant is never above it). */
function withCap(p: ProviderParts, prepared: PreparedRun, capUsd: number): PreparedRun {
  const request = { ...prepared.request, nativeOptions: { ...prepared.request.nativeOptions, [BUDGET_OPTION_ARG]: capUsd } };
  return { ...prepared, request, argv: argvOf(p, request) };
}

function unsettled(runtime: Runtime): RunEntry<LiveRun>[] {
  return runtime.registry.entries().filter((entry) => !entry.completed);
}

function instanceId(p: ProviderParts): string {
  return (p.instanceId ??= process.getBuiltinModule('node:crypto').randomUUID());
}

function getCapabilities(p: ProviderParts): JsonObject {
  return describeCapabilities({
    tree: p.tree,
    maxTimeoutSeconds: p.config.maxTimeoutSeconds,
    maxOpenIdleSeconds: p.config.maxOpenIdleSeconds ?? DEFAULT_MAX_OPEN_IDLE_SECONDS,
    assertedVersion: p.assertedVersion,
    recursive: p.recursive,
    cleanup: p.cleanup,
    cleanupFallbackRuns: p.fallbacks.runs,
    platform: p.platform,
    budget: p.ledger === null ? null : p.ledger.snapshot(),
    instanceId: instanceId(p),
    state: p.records.status(),
    binary: () => resolveBin(p.config),
    worktree: () => (p.gitAvailability ??= describeGit(p.gitSync, p.config.cwd)),
  });
}

/** Session ids of a directory's saved transcripts, newest first; empty when the folder cannot be read. */
function listSessionIds(env: Readonly<Record<string, string | undefined>>, cwd: string): string[] {
  const dir = getProjectDir(env, cwd);
  return dir === null ? [] : listTranscriptIds(dir, TRANSCRIPT_FS);
}

const TRANSCRIPT_FS: TranscriptDirReader = {
  names: (dir) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  },
  mtimeMs: (path) => {
    try {
      return statSync(path).mtimeMs;
    } catch {
      return null;
    }
  },
};
