/**
 * The open-run tools (runs started with keep_open): claude.run.send writes or queues the next user message,
 * claude.run.close ends the conversation, and a release of an open run closes it first. Every refusal is a
 * ToolError thrown before anything is written.
 */
import type { CallContext, ToolOutcome } from '../contracts/providers.ts';
import type { JsonObject } from '../util/json.ts';
import type { RunEntry } from '../runs/registry.ts';
import { ToolError } from '../tool-errors.ts';
import { MAX_QUEUED_MESSAGE_BYTES, type CloseReason, type OpenConversation, type SendReceipt } from '../runs/turns.ts';
import type { LiveRun, Runtime } from './runtime.ts';
import { viewRun } from './result-view.ts';

/** How long a release waits for an open run it closed to settle before it answers run_active. */
export const RELEASE_CLOSE_WAIT_MS = 10_000;

/** The conversation of a live open run; run_not_open (nothing written) for any other run. */
export function openConversationOf(entry: RunEntry<LiveRun>): OpenConversation {
  const open = entry.live.execution?.open ?? null;
  if (open === null) throw new ToolError('run_not_open', 'the run was not started with keep_open: true; nothing was sent', '/run_id');
  if (entry.completed)
    throw new ToolError('run_not_open', `the run has settled (${open.report().close_reason ?? 'ended'}); nothing was sent`, '/run_id');
  return open;
}

/** Checks the message, then writes it or queues it behind the running turn. */
export function sendToRun(entry: RunEntry<LiveRun>, message: string): SendReceipt {
  const open = openConversationOf(entry);
  if (message.length === 0) throw new ToolError('invalid_arguments', 'message must be a non-empty string', '/message');
  if (message.includes('\0')) throw new ToolError('invalid_arguments', 'message must not contain NUL bytes', '/message');
  if (Buffer.byteLength(message, 'utf8') > MAX_QUEUED_MESSAGE_BYTES)
    throw new ToolError('invalid_arguments', `message must be at most ${MAX_QUEUED_MESSAGE_BYTES} bytes of UTF-8`, '/message');
  return open.send(message);
}

/** Ends an open run's conversation; false when the run is not an open one still taking messages. */
export function closeOpenRun(entry: RunEntry<LiveRun>, reason: CloseReason): boolean {
  const open = entry.live.execution?.open ?? null;
  if (open === null || entry.completed) return false;
  open.close(reason);
  return true;
}

export function sendTool(args: JsonObject, runtime: Runtime): ToolOutcome {
  const runId = String(args['run_id']);
  const { entry, receipt } = runtime.send(runId, typeof args['message'] === 'string' ? args['message'] : '');
  const when = receipt.queued ? `queued behind the running turn (${receipt.ahead} message(s) ahead)` : 'running now';
  return {
    ok: true,
    summary: `turn ${receipt.turn} of ${runId} ${when}; read its answer with claude.run.result (wait_seconds waits until the run is idle again)`,
    result: {
      run_id: runId,
      turn: receipt.turn,
      queued: receipt.queued,
      queued_ahead: receipt.ahead,
      run: viewRun(runtime.resultOf(entry), 'summary'),
    },
  };
}

export function closeTool(args: JsonObject, runtime: Runtime): ToolOutcome {
  const entry = runtime.registry.get(String(args['run_id']));
  const open = entry.live.execution?.open ?? null;
  if (open === null) throw new ToolError('run_not_open', 'the run was not started with keep_open: true; nothing was closed', '/run_id');
  const requested = closeOpenRun(entry, 'close');
  const body = runtime.resultOf(entry);
  return {
    ok: true,
    summary: requested
      ? `closing ${entry.run_id}: its native process exits once stdin is closed; claude.run.result shows the outcome and cleanup`
      : `${entry.run_id} had already ended`,
    result: { close_requested: requested, run: viewRun(body, 'summary') },
  };
}

/** A release of an open run still taking messages closes it and waits (bounded) for it to settle first. */
export async function closeBeforeRelease(runId: string, ctx: CallContext, runtime: Runtime): Promise<void> {
  const entry = runtime.registry.get(runId);
  if (closeOpenRun(entry, 'release')) await runtime.waitSettled(entry, RELEASE_CLOSE_WAIT_MS, ctx.signal);
}
