import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../runs/event-ring.ts';
import type { JsonSchema, ToolDefinition } from '../contracts/providers.ts';
import type { JsonObject } from '../util/json.ts';
import { MAX_ACTIVE_RUNS, MAX_RETAINED_RUNS } from '../runs/registry.ts';
import { toolAnnotations, toolMeta, toWireName, type ToolName } from './declarations.ts';
import { assertNever } from '../util/assert-never.ts';
import { DEFAULT_TIMEOUT_SECONDS, RUN_PERMISSION_MODES } from './run-input.ts';
import { RESULT_DETAILS, RUN_VIEW_SCHEMA } from './result-view.ts';
import { DEFAULT_ASK_HOST_TIMEOUT_SECONDS, MAX_ASK_HOST_TIMEOUT_SECONDS } from '../permission/spec.ts';
import { MAX_DENY_REASON_CHARS } from '../permission/preview.ts';
import { openRunProperties, SEND_INPUT } from './open-catalog.ts';

export const MAX_WAIT_SECONDS = 30;
export const MAX_EVENTS_PAGE_LIMIT = MAX_PAGE_LIMIT;
export const DEFAULT_EVENTS_PAGE_LIMIT = DEFAULT_PAGE_LIMIT;

export interface CatalogOptions {
  /** Native option properties generated from cli-tree.json, keyed by MCP argument name. */
  readonly nativeProperties: Readonly<Record<string, JsonSchema>>;
  readonly maxTimeoutSeconds: number;
  /** The operator's largest open_idle_seconds (--max-open-idle-seconds). */
  readonly maxOpenIdleSeconds: number;
  readonly underscoreNames: boolean;
}

const RUN_ID: JsonSchema = {
  type: 'string',
  description: 'An adapter run_id returned by claude.run.start or claude.run.',
  minLength: 1,
  maxLength: 128,
};
const LIFETIME =
  `Handles live in this adapter process only (at most ${MAX_RETAINED_RUNS} retained, ${MAX_ACTIVE_RUNS} active or with unconfirmed cleanup); ` +
  'they die with it. Native saved conversations are untouched: to continue one later, pass its session_id as resume_session_id.';
const SESSIONS =
  "A result's session_id names its saved conversation: to continue it, pass that id as resume_session_id (the result's resume field shows it). " +
  'session_id as an argument only starts a NEW conversation under a fresh UUID you choose; an id that already exists is refused.';

function runInputSchema(options: CatalogOptions): JsonSchema {
  const { permission_mode: _ignored, ...native } = options.nativeProperties;
  return {
    type: 'object',
    additionalProperties: false,
    required: ['prompt'],
    properties: {
      prompt: {
        type: 'string',
        minLength: 1,
        description: 'The prompt for Claude Code (print mode). Passed after `--`, or on stdin when large.',
      },
      cwd: { type: 'string', minLength: 1, description: "Absolute path of an existing working directory. Default: the server's own." },
      permission_mode: {
        type: 'string',
        enum: RUN_PERMISSION_MODES,
        default: 'dontAsk',
        description:
          'Native permission mode. dontAsk (default) denies anything that would prompt; plan; acceptEdits; default only with ask_host (the mode ask_host uses when permission_mode is left out). Bypass modes are not available.',
      },
      timeout_seconds: {
        type: 'integer',
        minimum: 1,
        maximum: options.maxTimeoutSeconds,
        default: DEFAULT_TIMEOUT_SECONDS,
        description: `Wall-clock bound for the run (default ${DEFAULT_TIMEOUT_SECONDS}, at most ${options.maxTimeoutSeconds}).`,
      },
      ask_host: {
        type: 'boolean',
        default: false,
        description:
          'Opt in: permission prompts of the nested run are asked of the person at this MCP client (claude.run.start: pending questions show in claude.run.result and are answered with claude.run.answer). Without permission_mode (or with default) the native default mode is used; acceptEdits asks only what it does not allow; dontAsk and plan never ask and are refused with it. No answer within ask_host_timeout_seconds is a denial.',
      },
      ask_host_timeout_seconds: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_ASK_HOST_TIMEOUT_SECONDS,
        default: DEFAULT_ASK_HOST_TIMEOUT_SECONDS,
        description: `How long one permission question waits for an answer before it is denied (default ${DEFAULT_ASK_HOST_TIMEOUT_SECONDS}, at most ${MAX_ASK_HOST_TIMEOUT_SECONDS}).`,
      },
      idle_timeout_seconds: {
        type: 'integer',
        minimum: 1,
        maximum: options.maxTimeoutSeconds,
        description: 'End the run when the native process writes nothing for this long.',
      },
      ...native,
    },
  };
}

/** claude.run.start's input: claude.run's and the open-run arguments (claude.run waits for one answer). */
function startInput(runInput: JsonSchema, maxOpenIdleSeconds: number): JsonSchema {
  const properties = runInput['properties'] as Record<string, JsonSchema>;
  return { ...runInput, properties: { ...properties, ...openRunProperties(maxOpenIdleSeconds) } };
}

const output = (result: JsonSchema): JsonSchema => ({ type: 'object', properties: { result }, required: ['result'] });
const OBJECT_OUTPUT = output({ type: 'object', description: "The tool's result object (see docs/tools.md)." });
const RUN_OUTPUT = output(RUN_VIEW_SCHEMA);
const CANCEL_OUTPUT = output({
  type: 'object',
  required: ['cancel_requested', 'run'],
  properties: { cancel_requested: { type: 'boolean' }, run: RUN_VIEW_SCHEMA },
});

function outputSchemaOf(name: ToolName): JsonSchema {
  switch (name) {
    case 'claude.run':
    case 'claude.run.start':
    case 'claude.run.result':
      return RUN_OUTPUT;
    case 'claude.run.cancel':
      return CANCEL_OUTPUT;
    case 'claude.run.send':
    case 'claude.run.close':
    case 'claude.run.list':
    case 'claude.run.events':
    case 'claude.run.release':
    case 'claude.run.answer':
    case 'claude.worktree.remove':
      return OBJECT_OUTPUT;
    default:
      return assertNever(name);
  }
}

function define(name: ToolName, options: CatalogOptions, title: string, description: string, inputSchema: JsonSchema): ToolDefinition {
  return {
    name: toWireName(name, options.underscoreNames),
    title,
    description,
    inputSchema,
    outputSchema: outputSchemaOf(name),
    annotations: { title, ...toolAnnotations(name) },
    _meta: toolMeta(name) as JsonObject,
  };
}

/** claude.run.result's own properties (beside run_id). */
const RESULT_INPUT: Record<string, JsonSchema> = {
  wait_seconds: {
    type: 'integer',
    minimum: 0,
    maximum: MAX_WAIT_SECONDS,
    default: 0,
    description: 'Wait up to this long for the run to settle.',
  },
  detail: {
    type: 'string',
    enum: RESULT_DETAILS,
    default: 'summary',
    description: 'summary (default): what claude.run returns; full: the whole result object with the native final event.',
  },
};

/** claude.run.events' own properties (beside run_id). */
const EVENTS_INPUT: Record<string, JsonSchema> = {
  cursor: {
    type: 'string',
    minLength: 1,
    maxLength: 256,
    description: 'Opaque next_cursor of a previous page; omit to start at the oldest retained event.',
  },
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: MAX_EVENTS_PAGE_LIMIT,
    default: DEFAULT_EVENTS_PAGE_LIMIT,
    description: `Events per page (1-${MAX_EVENTS_PAGE_LIMIT}).`,
  },
};

const ANSWER_INPUT: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['run_id', 'question_id', 'decision'],
  properties: {
    run_id: RUN_ID,
    question_id: { type: 'string', minLength: 1, maxLength: 128, description: 'The question_id of a pending question of this run.' },
    decision: { type: 'string', enum: ['allow', 'deny'] },
    reason: { type: 'string', maxLength: MAX_DENY_REASON_CHARS, description: 'Deny only: why, as the nested model will read it.' },
  },
};

function worktreeRemoveInput(worktreeName: JsonSchema): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['cwd', 'name'],
    properties: {
      cwd: {
        type: 'string',
        minLength: 1,
        description: "Absolute path inside the repository (its main checkout, as the run's cwd was).",
      },
      name: { ...worktreeName, description: 'The worktree name the run was given (its worktree.name).' },
      force: {
        type: 'boolean',
        default: false,
        description: 'Remove even when uncommitted changes or unreachable commits would be lost.',
      },
    },
  };
}

/** claude.run.send and claude.run.close: the tools of runs started with keep_open. */
function openRunTools(options: CatalogOptions, byRunId: JsonSchema): ToolDefinition[] {
  return [
    define(
      'claude.run.send',
      options,
      'Send the next message to an open run',
      'Send the next user message to a run started with keep_open (same native process, same conversation). While a turn runs, the message waits in a bounded queue and is written after that turn ends (send_queue_full past the bound); never interleaved. Returns at once with the turn number; read the answer with claude.run.result (wait_seconds waits until the run is idle again; turns lists each turn in detail "full"). Refused with run_not_open for a run that was not started with keep_open or is closing or ended, turn_limit_reached at its turn_limit; nothing is written then.',
      SEND_INPUT,
    ),
    define(
      'claude.run.close',
      options,
      'Close an open run',
      'End a run started with keep_open: its stdin is closed and the native process exits by itself once the running turn (if any) has ended; queued messages are dropped. The run then settles with the latest turn as its result and its cleanup confirmed as for any run. Closing an idle run you no longer need frees its active slot.',
      byRunId,
    ),
  ];
}

/** The advertised tools in a fixed order; the validator checks calls against these very schemas. */
export function buildCatalog(options: CatalogOptions): ToolDefinition[] {
  const runInput = runInputSchema(options);
  const worktreeName: JsonSchema = options.nativeProperties['worktree'] ?? { type: 'string', minLength: 1 };
  const byId = (extra: Record<string, JsonSchema> = {}): JsonSchema => ({
    type: 'object',
    additionalProperties: false,
    required: ['run_id'],
    properties: { run_id: RUN_ID, ...extra },
  });
  return [
    define(
      'claude.run',
      options,
      'Run Claude Code',
      `Run one bounded Claude Code prompt (claude -p) and wait for its answer and confirmed process cleanup. Returns a compact summary (answer, outcome, session, cost); claude.run.result with detail "full" has the whole native result. Sends progress per native event when a progressToken is given. ${SESSIONS} ${LIFETIME}`,
      runInput,
    ),
    define(
      'claude.run.start',
      options,
      'Start a Claude Code run',
      `Start the same run as claude.run without waiting; returns an adapter-owned run_id at once. Fails with active_limit_reached or capacity_exhausted (starting nothing) at the bounds. With keep_open: true the run stays open after its answer (state idle), in one native process and one conversation, for further messages sent with claude.run.send; end it with claude.run.close when done, as it holds an active slot until then (it also ends after open_idle_seconds idle, at turn_limit, or on cancel). ${SESSIONS} ${LIFETIME}`,
      startInput(runInput, options.maxOpenIdleSeconds),
    ),
    define(
      'claude.run.list',
      options,
      'List runs',
      `List the runs retained by this adapter process: run_id, state, completed, timestamps, session_id. ${LIFETIME}`,
      { type: 'object', additionalProperties: false, properties: {} },
    ),
    define(
      'claude.run.result',
      options,
      'Run result',
      `Current state of a run, or its completed result (the summary claude.run returns; detail "full" adds the native final event, usage, exit status, stderr tail and counters). wait_seconds (0-${MAX_WAIT_SECONDS}) waits for the run to settle. Reading never releases the handle.`,
      byId(RESULT_INPUT),
    ),
    define(
      'claude.run.events',
      options,
      'Run events',
      `A bounded cursor page of the run's native stream-json events (the run keeps at most 256 events / 256 KiB; overflow is reported as missed_events). Reading never releases the handle.`,
      byId(EVENTS_INPUT),
    ),
    define(
      'claude.run.cancel',
      options,
      'Cancel a run',
      'Cancel one owned run: its native process group and descendants are ended through the supervisor (SIGINT, then SIGTERM, then SIGKILL). Later claude.run.result reads show the cleanup outcome. Does not release the handle or touch the saved conversation.',
      byId(),
    ),
    define(
      'claude.run.release',
      options,
      'Release a run',
      'Discard one completed run and its events, only after process cleanup was confirmed (run_active / cleanup_unconfirmed otherwise). The native saved conversation is untouched.',
      byId(),
    ),
    ...openRunTools(options, byId()),
    define(
      'claude.run.answer',
      options,
      'Answer a permission question',
      'Answer one pending permission question of a run started with ask_host (claude.run.result shows them under permission_questions): allow lets the nested Claude Code run that tool use with exactly the input shown; deny refuses it (reason optional, shown to the nested model). Only a pending question can be answered (permission_question_not_pending otherwise).',
      ANSWER_INPUT,
    ),
    define(
      'claude.worktree.remove',
      options,
      "Remove a run's worktree",
      "Delete the git worktree a run made (<repository>/.claude/worktrees/<name>) and its branch worktree-<name>. Worktrees and branches are the runs' work product and outlive runs and this server; nothing removes them but this tool. Refused (worktree_has_work) when the worktree has uncommitted changes or commits (of its branch or detached HEAD) no other branch or tag reaches, unless force is true. Refused even with force while a run of this server or any process works in it, while its git lock names a live or uncheckable process, or while a rebase, merge, bisect or cherry-pick is under way there. Reports what it removed and, when forced, what it discarded.",
      worktreeRemoveInput(worktreeName),
    ),
  ];
}
