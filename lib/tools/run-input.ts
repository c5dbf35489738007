import { isAbsolute } from 'node:path';
import { ToolError } from '../tool-errors.ts';
import { checkPermissionRules } from '../native/permission-rules.ts';
import type { JsonObject, JsonValue } from '../util/json.ts';
import { DEFAULT_ASK_HOST_TIMEOUT_SECONDS } from '../permission/spec.ts';
import { DEFAULT_MAX_OPEN_IDLE_SECONDS, parseOpenInput } from './open-input.ts';
import { PERMISSION_MODES, type PermissionMode, type RunRequest, type SessionIntent } from '../runs/types.ts';

export const DEFAULT_TIMEOUT_SECONDS = 600;
/**
 * The native mode in which every undecided prompt is asked: the mode ask_host runs in. Callers may name it
 * only with ask_host (it then means what leaving permission_mode out means); it is not a native option the
 * cli-tree offers on its own, since without ask_host nothing could answer its prompts.
 */
export const ASK_HOST_PERMISSION_MODE = 'default';
/** What permission_mode accepts: the cli-tree's modes, and the ask_host mode. */
export const RUN_PERMISSION_MODES = [...PERMISSION_MODES, ASK_HOST_PERMISSION_MODE] as const;

export interface RunInputContext {
  /** MCP argument names that the cli-tree declares (besides permission_mode). */
  readonly nativeArgNames: ReadonlySet<string>;
  readonly defaultCwd: string;
  readonly isDirectory: (path: string) => boolean;
  /** The operator's largest open_idle_seconds (default DEFAULT_MAX_OPEN_IDLE_SECONDS). */
  readonly maxOpenIdleSeconds?: number;
}

/**
 * Turns schema-validated claude.run arguments into a RunRequest, applying the rules a schema cannot
 * express. Every failure is an input error naming the argument; nothing is spawned before this passes.
 */
export function parseRunInput(args: JsonObject, ctx: RunInputContext): RunRequest {
  const prompt = args['prompt'];
  if (typeof prompt !== 'string' || prompt.length === 0)
    throw new ToolError('invalid_arguments', 'prompt must be a non-empty string', '/prompt');

  const cwdArg = args['cwd'];
  const cwd = typeof cwdArg === 'string' ? cwdArg : ctx.defaultCwd;
  if (!isAbsolute(cwd)) throw new ToolError('invalid_arguments', 'cwd must be an absolute path', '/cwd');
  if (cwd.includes('\0') || !ctx.isDirectory(cwd)) throw new ToolError('invalid_arguments', 'cwd must name an existing directory', '/cwd');

  const session = getSessionIntent(args);

  const allowed = stringList(args['allowed_tools']);
  const disallowed = stringList(args['disallowed_tools']);
  checkPermissionRules(allowed, disallowed);

  const timeoutSeconds = typeof args['timeout_seconds'] === 'number' ? args['timeout_seconds'] : DEFAULT_TIMEOUT_SECONDS;
  const idle = args['idle_timeout_seconds'];
  if (typeof idle === 'number' && idle > timeoutSeconds) {
    throw new ToolError('invalid_arguments', 'idle_timeout_seconds must not exceed timeout_seconds', '/idle_timeout_seconds');
  }

  const nativeOptions: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(args)) {
    if (!ctx.nativeArgNames.has(key) || key === 'permission_mode' || value === undefined) continue;
    // UUIDs are case-insensitive natively; one spelling keeps locks and resume checks consistent.
    nativeOptions[key] = SESSION_ID_ARGS.has(key) && typeof value === 'string' ? value.toLowerCase() : value;
  }
  const askHost = parseAskHost(args, typeof idle === 'number' ? idle : null);
  const chosen = args['permission_mode'];
  // With ask_host and no native mode chosen, the argv keeps dontAsk's place and the prompt tool wiring sets default.
  const permissionMode = typeof chosen === 'string' && chosen !== ASK_HOST_PERMISSION_MODE ? (chosen as PermissionMode) : 'dontAsk';

  const keepOpen = parseOpenInput(args, ctx.maxOpenIdleSeconds ?? DEFAULT_MAX_OPEN_IDLE_SECONDS);
  return {
    askHost,
    ...(keepOpen === null ? {} : { keepOpen }),
    prompt,
    cwd,
    permissionMode,
    nativeOptions,
    session,
    timeoutMs: timeoutSeconds * 1000,
    idleTimeoutMs: typeof idle === 'number' ? idle * 1000 : null,
  };
}

/**
 * ask_host is opt-in. It needs a mode in which prompts are asked at all: dontAsk and plan decide every
 * prompt natively and never ask, so naming them with ask_host is refused. Without a mode, or
 * with `default`, the run uses the native `default` mode; `default` without ask_host is refused, as nothing
 * would answer its prompts. The idle timer must outlast a question, or waiting would end the run.
 */
function parseAskHost(args: JsonObject, idleSeconds: number | null): { readonly timeoutMs: number; readonly defaultMode: boolean } | null {
  const timeout = args['ask_host_timeout_seconds'];
  const mode = typeof args['permission_mode'] === 'string' ? args['permission_mode'] : null;
  if (args['ask_host'] !== true) {
    if (timeout !== undefined)
      throw new ToolError('invalid_arguments', 'ask_host_timeout_seconds requires ask_host: true', '/ask_host_timeout_seconds');
    if (mode === ASK_HOST_PERMISSION_MODE) {
      throw new ToolError(
        'invalid_arguments',
        'permission_mode default asks before tool uses, and only ask_host can answer: add ask_host: true (the same as ask_host with permission_mode left out), or leave permission_mode out (dontAsk: what would prompt is denied)',
        '/permission_mode',
      );
    }
    return null;
  }
  if (mode !== null && mode !== ASK_HOST_PERMISSION_MODE && mode !== 'acceptEdits') {
    throw new ToolError(
      'invalid_arguments',
      `ask_host cannot be combined with permission_mode ${mode}: that mode decides every prompt itself and never asks; leave permission_mode out (or pass default) to be asked in the native default mode, or use acceptEdits`,
      '/permission_mode',
    );
  }
  const seconds = typeof timeout === 'number' ? timeout : DEFAULT_ASK_HOST_TIMEOUT_SECONDS;
  if (idleSeconds !== null && idleSeconds <= seconds) {
    throw new ToolError(
      'invalid_arguments',
      'idle_timeout_seconds must exceed ask_host_timeout_seconds: a run waiting for an answer writes nothing',
      '/idle_timeout_seconds',
    );
  }
  return { timeoutMs: seconds * 1000, defaultMode: mode !== 'acceptEdits' };
}

const SESSION_ID_ARGS: ReadonlySet<string> = new Set(['session_id', 'resume_session_id']);

function getSessionIntent(args: JsonObject): SessionIntent {
  const newId = lower(args['session_id']);
  const resumeId = lower(args['resume_session_id']);
  const continuePrevious = args['continue_previous'] === true;
  const fork = args['fork_session'] === true;
  const noPersistence = args['no_session_persistence'] === true;

  const chosen = [
    typeof newId === 'string' ? '/session_id' : null,
    typeof resumeId === 'string' ? '/resume_session_id' : null,
    continuePrevious ? '/continue_previous' : null,
  ].filter((x): x is string => x !== null);
  if (chosen.length > 1) {
    throw new ToolError('invalid_arguments', 'session_id, resume_session_id and continue_previous are mutually exclusive', chosen[1]);
  }
  if (noPersistence && (typeof resumeId === 'string' || continuePrevious)) {
    throw new ToolError(
      'invalid_arguments',
      'no_session_persistence cannot be combined with resuming or continuing a saved conversation',
      '/no_session_persistence',
    );
  }
  if (fork && typeof resumeId !== 'string' && !continuePrevious) {
    throw new ToolError('invalid_arguments', 'fork_session requires resume_session_id or continue_previous', '/fork_session');
  }
  // A resumed conversation runs again in the worktree it ran in (the native does that itself); a new
  // worktree for it only makes sense as a fork, which leaves the original conversation where it is.
  if (typeof args['worktree'] === 'string' && (typeof resumeId === 'string' || continuePrevious) && !fork) {
    throw new ToolError(
      'invalid_arguments',
      'worktree with resume_session_id or continue_previous needs fork_session: a resumed conversation runs again in the worktree it ran in without worktree',
      '/worktree',
    );
  }
  if (typeof newId === 'string') return { kind: 'new', sessionId: newId };
  if (typeof resumeId === 'string') return { kind: 'resume', sessionId: resumeId, fork };
  if (continuePrevious) return { kind: 'continue', fork };
  return { kind: 'fresh' };
}

function lower(value: JsonValue | undefined): JsonValue | undefined {
  return typeof value === 'string' ? value.toLowerCase() : value;
}

function stringList(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string') : [];
}
