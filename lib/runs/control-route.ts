/**
 * What a run does with each control line its native writes on stdout. Every can_use_tool request is
 * answered: by the run's permission port when the run asks its host (ask_host), else denied at once, since
 * such a run is started without a prompt tool and its permission_mode alone decides. Every other control
 * line is never an answer and never a question: counted, and a request among them (the native waits for an
 * answer) is refused with an error response, up to a bound. The lines themselves stay in the run's events.
 */
import { denyLine, errorResponseLine, type CanUseToolRequest, type ControlLine, type UnknownControl } from '../native/control.ts';
import { assertNever } from '../util/assert-never.ts';

/** Writes one line to the run's native stdin; false once its input has ended or the run is gone. */
export type SendLine = (line: string) => boolean;

/** Where an ask_host run's permission requests go (its broker); the answer is written through `send`. */
export interface PermissionPort {
  ask(request: CanUseToolRequest, send: SendLine): void;
}

/**
 * Unknown control requests one run refuses in all; later ones are only counted (a native that floods them
 * gets no more writes). A refusal costs the native one denial and this package one stdin line.
 */
export const MAX_CONTROL_REFUSALS_PER_RUN = 64;

/** The message the model reads when a tool use is asked about in a run that cannot ask anyone. */
export const NO_ASK_HOST_DENY_MESSAGE =
  'claude-run-mcp: this run was started without ask_host, so no one can be asked; its permission_mode decides alone. Denied.';

export interface ControlTally {
  /** can_use_tool requests denied at once because the run does not ask its host. */
  denied_without_ask_host: number;
  /** Control lines of an unknown type or subtype, or malformed. */
  unknown: number;
  /** Unknown control requests answered with an error response (at most MAX_CONTROL_REFUSALS_PER_RUN). */
  refused: number;
  /** control_response lines that answered no request of this package. */
  unmatched_responses: number;
}

export function createControlTally(): ControlTally {
  return { denied_without_ask_host: 0, unknown: 0, refused: 0, unmatched_responses: 0 };
}

export interface ControlRoute {
  readonly port: PermissionPort | null;
  readonly send: SendLine;
  readonly tally: ControlTally;
  /** True when a response answered a request of this package (an interrupt); absent: none was sent. */
  readonly onResponse?: (line: Extract<ControlLine, { kind: 'response' }>) => boolean;
}

export function routeControlLine(line: ControlLine, route: ControlRoute): void {
  switch (line.kind) {
    case 'can_use_tool':
      if (route.port !== null) route.port.ask(line, route.send);
      else {
        route.tally.denied_without_ask_host += 1;
        route.send(denyLine(line.requestId, NO_ASK_HOST_DENY_MESSAGE));
      }
      return;
    case 'response':
      if (route.onResponse?.(line) !== true) route.tally.unmatched_responses += 1;
      return;
    case 'unknown':
      refuse(line, route);
      return;
    default:
      assertNever(line);
  }
}

function refuse(line: UnknownControl, route: ControlRoute): void {
  route.tally.unknown += 1;
  if (line.refusableId === null || route.tally.refused >= MAX_CONTROL_REFUSALS_PER_RUN) return;
  route.tally.refused += 1;
  const what = line.reason === 'malformed' ? `a malformed ${line.subtype ?? 'control'} request` : `${line.subtype ?? 'this'} requests`;
  route.send(errorResponseLine(line.refusableId, `claude-run-mcp does not serve ${what}; refused.`));
}
