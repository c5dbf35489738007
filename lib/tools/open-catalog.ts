/** The schema parts of open runs (keep_open): claude.run.start's extra properties and claude.run.send's input. */
import type { JsonSchema } from '../contracts/providers.ts';
import { MAX_OPEN_TURNS, MAX_QUEUED_MESSAGE_BYTES } from '../runs/turns.ts';
import { defaultOpenIdleSeconds } from './open-input.ts';

export function openRunProperties(maxOpenIdleSeconds: number): Record<string, JsonSchema> {
  return {
    keep_open: {
      type: 'boolean',
      default: false,
      description:
        'Opt in: after its answer the run stays open (state idle) in the same native process and conversation, for more messages with claude.run.send. Use it when follow-ups are likely; close it with claude.run.close when done (it holds an active slot until it ends). timeout_seconds still bounds the whole run.',
    },
    open_idle_seconds: {
      type: 'integer',
      minimum: 1,
      maximum: maxOpenIdleSeconds,
      default: defaultOpenIdleSeconds(maxOpenIdleSeconds),
      description: `With keep_open: how long the run waits, idle, for its next message before it ends by itself (default ${defaultOpenIdleSeconds(maxOpenIdleSeconds)}, at most ${maxOpenIdleSeconds}).`,
    },
    turn_limit: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_OPEN_TURNS,
      default: MAX_OPEN_TURNS,
      description: `With keep_open: the most turns (messages, the prompt included) the run takes; it ends after the last (default and at most ${MAX_OPEN_TURNS}).`,
    },
  };
}

export const SEND_INPUT: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['run_id', 'message'],
  properties: {
    run_id: {
      type: 'string',
      description: 'The run_id of a run started with claude.run.start and keep_open: true.',
      minLength: 1,
      maxLength: 128,
    },
    message: {
      type: 'string',
      minLength: 1,
      description: `The next user message (at most ${MAX_QUEUED_MESSAGE_BYTES} bytes of UTF-8).`,
    },
  },
};
