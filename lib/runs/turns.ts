/**
 * An open run's conversation (keep_open): the native stays alive after each turn's result and waits, idle,
 * for the next user message on its stdin. Messages sent during a turn wait in a bounded queue and are written
 * one at a time, each only after the running turn's result, so turns never interleave. Each turn's outcome is
 * kept (bounded); the run ends by closing stdin: on close or release, at the idle bound, at the turn limit, or
 * on a cancel while idle. The clock is injected; the only effect is the native's stdin.
 */
import type { Clock } from '../util/clock.ts';
import type { JsonObject } from '../util/json.ts';
import { ToolError } from '../tool-errors.ts';
import { getBoolean, getNumber, getObject, getString } from '../native/events.ts';
import { userMessageLine } from '../native/argv.ts';
import { getRunCostUsd } from './budget.ts';
import type { NativeInput } from './run-scope.ts';

/** Messages that may wait for the running turn; one more is refused (send_queue_full). */
export const MAX_QUEUED_MESSAGES = 8;
/** The UTF-8 bytes all waiting messages may hold together; more is refused (send_queue_full). */
export const MAX_QUEUED_MESSAGE_BYTES = 1024 * 1024;
/** The largest turn_limit a run may ask for, and its default. */
export const MAX_OPEN_TURNS = 100;
/** Turn records a run keeps; past it the oldest are dropped (counted in turns_dropped). */
export const MAX_TURNS_KEPT = 32;
/** How long an open run waits, idle, for its next message when open_idle_seconds is not given (capped by the operator's maximum). */
export const DEFAULT_OPEN_IDLE_SECONDS = 300;
/** A turn record's result text is cut to this many characters (the latest answer is also the run's `result`, whole). */
export const MAX_TURN_RESULT_CHARS = 16 * 1024;

/** running: a turn is under way; idle: waiting for a message; closing: stdin ends after the running turn; ended: stdin closed. */
export type OpenPhase = 'running' | 'idle' | 'closing' | 'ended';
export const CLOSE_REASONS = ['close', 'release', 'idle_bound', 'turn_limit', 'cancel', 'run_ended'] as const;
export type CloseReason = (typeof CLOSE_REASONS)[number];

export interface OpenOptions {
  readonly idleMs: number;
  readonly turnLimit: number;
}

/** One turn's outcome, from its `result` event; figures the native did not report are null. */
export type TurnRecord = {
  turn: number;
  subtype: string | null;
  is_error: boolean;
  result: string | null;
  result_truncated: boolean;
  session_id: string | null;
  usage: JsonObject | null;
  total_cost_usd: number | null;
  /** This turn's own cost: its model_usage_since_last_result, else the growth of total_cost_usd. */
  cost_usd: number | null;
  duration_ms: number | null;
};

/** What the full result shows of an open run. */
export type OpenReport = {
  phase: OpenPhase;
  /** Turns whose result arrived; the first is the start prompt's. */
  turns_total: number;
  turns_dropped: number;
  queued: number;
  turn_limit: number;
  idle_seconds: number;
  close_reason: CloseReason | null;
};

export interface SendReceipt {
  /** The turn this message will be (1 is the start prompt's). */
  readonly turn: number;
  /** Written at once (the run was idle), or queued behind the running turn. */
  readonly queued: boolean;
  /** Queued messages before it (0 when written at once, or first in the queue). */
  readonly ahead: number;
}

export interface OpenConversation {
  phase(): OpenPhase;
  /** Queues or writes the next message; throws ToolError (run_not_open, send_queue_full, turn_limit_reached) and writes nothing then. */
  send(message: string): SendReceipt;
  /** Ends the conversation: stdin now when idle, after the running turn's result otherwise (queued messages dropped). */
  close(reason: CloseReason): void;
  /** A cancel: true when the run was idle and its stdin was ended (nothing to interrupt). */
  endIfIdle(reason: CloseReason): boolean;
  /** The running turn's result arrived (its final event, or null when it was not a valid one). */
  onTurnResult(final: JsonObject | null): void;
  /** The native process is gone: nothing more is written. */
  onRunEnded(): void;
  /** True when a message was written and its turn's result never came. */
  unanswered(): boolean;
  /** clock.now() when the last message was written (the idle timeout counts quiet from it too). */
  lastWriteAt(): number;
  turns(): readonly TurnRecord[];
  report(): OpenReport;
  /** Resolves when the conversation next has nothing to do (idle with an empty queue) or ended. */
  whenQuiet(): Promise<void>;
  /** Called with each recorded turn (the budget charges it). */
  onTurn(listener: (turn: TurnRecord) => void): void;
}

export interface OpenHooks {
  readonly clock: Clock;
  readonly input: NativeInput;
  /** The run's visible state: idle between turns, running during one, stopping once stdin ended. */
  readonly onState: (state: 'idle' | 'running' | 'stopping') => void;
}

interface Conversation {
  readonly options: OpenOptions;
  readonly hooks: OpenHooks;
  phase: OpenPhase;
  closeReason: CloseReason | null;
  readonly queue: string[];
  queuedBytes: number;
  /** Messages written so far, the start prompt included. */
  written: number;
  readonly records: TurnRecord[];
  turnsTotal: number;
  lastWrite: number;
  disposeIdle: () => void;
  readonly listeners: Array<(turn: TurnRecord) => void>;
  quiet: Array<() => void>;
}

/** The conversation of an open run whose start prompt is already on its way (turn 1 is running). */
export function createOpenConversation(options: OpenOptions, hooks: OpenHooks): OpenConversation {
  const c: Conversation = {
    options,
    hooks,
    phase: 'running',
    closeReason: null,
    queue: [],
    queuedBytes: 0,
    written: 1,
    records: [],
    turnsTotal: 0,
    lastWrite: hooks.clock.now(),
    disposeIdle: () => {},
    listeners: [],
    quiet: [],
  };
  return {
    phase: () => c.phase,
    send: (message) => send(c, message),
    close: (reason) => close(c, reason),
    endIfIdle(reason) {
      if (c.phase !== 'idle') return false;
      close(c, reason);
      return true;
    },
    onTurnResult: (final) => onTurnResult(c, final),
    onRunEnded() {
      if (c.phase !== 'ended') c.closeReason ??= 'run_ended';
      // Messages still waiting were never written: none of them will be.
      c.queue.length = 0;
      c.queuedBytes = 0;
      endStdin(c);
    },
    unanswered: () => c.written > c.turnsTotal,
    lastWriteAt: () => c.lastWrite,
    turns: () => [...c.records],
    report: () => ({
      phase: c.phase,
      turns_total: c.turnsTotal,
      turns_dropped: c.turnsTotal - c.records.length,
      queued: c.queue.length,
      turn_limit: options.turnLimit,
      idle_seconds: options.idleMs / 1000,
      close_reason: c.closeReason,
    }),
    whenQuiet: () => (isQuiet(c) ? Promise.resolve() : new Promise((resolve) => c.quiet.push(resolve))),
    onTurn(listener) {
      c.listeners.push(listener);
    },
  };
}

function isQuiet(c: Conversation): boolean {
  return c.phase === 'ended' || (c.phase === 'idle' && c.queue.length === 0);
}

function wakeQuiet(c: Conversation): void {
  if (!isQuiet(c)) return;
  const waiting = c.quiet;
  c.quiet = [];
  for (const resolve of waiting) resolve();
}

function notOpen(why: string): ToolError {
  return new ToolError('run_not_open', `${why}; nothing was sent`);
}

function send(c: Conversation, message: string): SendReceipt {
  if (c.phase === 'closing') throw notOpen('the run is closing (its stdin ends after the running turn)');
  if (c.phase === 'ended') throw notOpen(`the run's conversation has ended (${c.closeReason ?? 'run_ended'})`);
  if (c.written + c.queue.length >= c.options.turnLimit)
    throw new ToolError('turn_limit_reached', `the run reached its turn_limit of ${c.options.turnLimit} turns; nothing was sent`);
  const bytes = Buffer.byteLength(message, 'utf8');
  if (c.phase === 'running') {
    if (c.queue.length >= MAX_QUEUED_MESSAGES)
      throw new ToolError('send_queue_full', `${MAX_QUEUED_MESSAGES} messages already wait for the running turn; nothing was sent`);
    if (c.queuedBytes + bytes > MAX_QUEUED_MESSAGE_BYTES)
      throw new ToolError('send_queue_full', `the waiting messages would exceed ${MAX_QUEUED_MESSAGE_BYTES} bytes; nothing was sent`);
    c.queue.push(message);
    c.queuedBytes += bytes;
    return { turn: c.written + c.queue.length, queued: true, ahead: c.queue.length - 1 };
  }
  write(c, message);
  return { turn: c.written, queued: false, ahead: 0 };
}

/** Writes one message: a new turn starts. */
function write(c: Conversation, message: string): void {
  if (!tryWrite(c, message)) throw notOpen('the native process is no longer reading');
}

/** Writes one message (a new turn starts); false, and the conversation over, when the native's stdin is gone. */
function tryWrite(c: Conversation, message: string): boolean {
  c.disposeIdle();
  if (!c.hooks.input.send(userMessageLine(message))) {
    c.closeReason ??= 'run_ended';
    c.queuedBytes = 0;
    endStdin(c);
    return false;
  }
  c.written += 1;
  c.lastWrite = c.hooks.clock.now();
  c.phase = 'running';
  c.hooks.onState('running');
  return true;
}

function onTurnResult(c: Conversation, final: JsonObject | null): void {
  if (c.phase === 'ended') return;
  record(c, final);
  if (c.phase === 'closing') return endStdin(c);
  if (c.turnsTotal >= c.options.turnLimit) {
    c.closeReason = 'turn_limit';
    return endStdin(c);
  }
  const next = c.queue.shift();
  if (next !== undefined) {
    c.queuedBytes -= Buffer.byteLength(next, 'utf8');
    // Called from native output delivery: a stdin gone meanwhile ends the conversation, it is no caller's error.
    if (!tryWrite(c, next)) c.queue.length = 0;
    return;
  }
  c.phase = 'idle';
  c.hooks.onState('idle');
  c.disposeIdle = c.hooks.clock.setTimeout(() => close(c, 'idle_bound'), c.options.idleMs);
  wakeQuiet(c);
}

function close(c: Conversation, reason: CloseReason): void {
  if (c.phase === 'ended' || c.phase === 'closing') return;
  c.closeReason = reason;
  c.queue.length = 0;
  c.queuedBytes = 0;
  if (c.phase === 'idle') return endStdin(c);
  c.phase = 'closing';
}

function endStdin(c: Conversation): void {
  c.disposeIdle();
  if (c.phase !== 'ended') {
    c.phase = 'ended';
    c.hooks.input.end();
    c.hooks.onState('stopping');
  }
  wakeQuiet(c);
}

function record(c: Conversation, final: JsonObject | null): void {
  c.turnsTotal += 1;
  const previous = c.records.at(-1)?.total_cost_usd ?? null;
  const text = getString(final, 'result');
  const turn: TurnRecord = {
    turn: c.turnsTotal,
    subtype: getString(final, 'subtype'),
    is_error: final === null || getBoolean(final, 'is_error') !== false,
    result: text === null ? null : text.slice(0, MAX_TURN_RESULT_CHARS),
    result_truncated: text !== null && text.length > MAX_TURN_RESULT_CHARS,
    session_id: getString(final, 'session_id'),
    usage: getObject(final, 'usage'),
    total_cost_usd: getNumber(final, 'total_cost_usd'),
    cost_usd: final === null ? null : getRunCostUsd({ final, events_total: 1, malformed_lines: 0 }, previous),
    duration_ms: getNumber(final, 'duration_ms'),
  };
  c.records.push(turn);
  if (c.records.length > MAX_TURNS_KEPT) c.records.shift();
  for (const listener of c.listeners) listener(turn);
}
