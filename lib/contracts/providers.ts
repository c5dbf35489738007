import type { JsonObject } from '../util/json.ts';
import type { ToolErrorData } from '../tool-errors.ts';

/** The JSON Schema subset the validator understands; tools/list advertises exactly these objects. */
export interface JsonSchema {
  type?: 'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'null';
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: readonly string[];
  additionalProperties?: boolean;
  enum?: readonly (string | number | boolean)[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: 'uuid';
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
}

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface ToolDefinition {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly annotations: ToolAnnotations;
  readonly _meta: JsonObject;
}

/** What a tool call receives besides its validated arguments. */
export interface CallContext {
  /** Aborted when the client cancels the request (notifications/cancelled) or the server closes. */
  readonly signal: AbortSignal;
  /** Present when the request carried _meta.progressToken; messages are advisory and may be dropped. */
  readonly progress: ((message: string) => void) | undefined;
  /** The validated _meta["io.github.computer-mcp/work-invocation"] UUID, else null. */
  readonly workInvocation: string | null;
  readonly protocolVersion: string;
  /** Present when the client can be asked (legacy era, form elicitation declared): elicitation/create. */
  readonly elicit?: ((params: JsonObject, signal: AbortSignal) => Promise<JsonObject>) | undefined;
}

/** The outcome of one tool: a result object, or a stable error with whatever result exists. */
/**
 * text: the human part shown after the summary line (a run's answer). When given and structuredContent
 * carries the data, the text content is summary + text instead of summary + serialized data.
 */
export type ToolOutcome =
  | { readonly ok: true; readonly summary: string; readonly result: JsonObject; readonly text?: string }
  | {
      readonly ok: false;
      readonly summary: string;
      readonly error: ToolErrorData;
      readonly result: JsonObject | null;
      readonly text?: string;
    };

export interface ToolProvider {
  list(): readonly ToolDefinition[];
  /** Arguments are already validated against the tool's inputSchema. Never throws a ToolError: returns it. */
  call(name: string, args: JsonObject, ctx: CallContext): Promise<ToolOutcome>;
  /**
   * Optional: the tasks extension. A provider without it answers every call synchronously. `| undefined` lets a
   * forwarding provider (lib/cli/deferred-providers.ts) answer through a getter.
   */
  readonly tasks?: TaskProvider | undefined;
}

/** Extension task statuses this server produces (input_required only for a run with ask_host that is asking). */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'cancelled' | 'failed';

/** One task as it stands now. A task is a run: taskId is its run_id. */
export interface TaskView {
  readonly taskId: string;
  /** Wire name of the tool that created it (its outputSchema shapes the completed result). */
  readonly toolName: string;
  readonly status: TaskStatus;
  readonly statusMessage: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  /** null: retention is by count (the run registry's bounds), not by time. */
  readonly ttlMs: number | null;
  readonly pollIntervalMs: number;
  /** The tool outcome once `completed`: the very outcome the synchronous call would have returned. */
  readonly outcome: ToolOutcome | null;
  /** With `failed`: the JSON-RPC error the task carries (absent: an internal error). */
  readonly error?: { readonly code: number; readonly message: string };
  /** With `input_required`: the outstanding requests by key (elicitation/create forms). */
  readonly inputRequests?: Readonly<Record<string, JsonObject>>;
}

/** Starting a task either yields one, or an outcome when nothing could start (the call's ordinary error result). */
export type TaskStart = { readonly kind: 'task'; readonly task: TaskView } | { readonly kind: 'outcome'; readonly outcome: ToolOutcome };

export interface TaskProvider {
  /** Whether calls of this tool become tasks when the request declares the extension. */
  supports(name: string): boolean;
  /** Arguments are already validated. Returns once the task is retrievable by get(). */
  start(name: string, args: JsonObject, ctx: CallContext): TaskStart;
  /**
   * null when no task has this id (never issued, evicted or released). A task of a server that is gone is
   * answered from its record: completed (or cancelled) when its result was kept, else failed with what is known.
   */
  get(taskId: string): TaskView | null;
  /** Asks the run to stop; idempotent. false when no task has this id. */
  cancel(taskId: string): boolean;
  /**
   * Answers outstanding input requests by key. A key that names a question already decided without the
   * person (its form outlived the bound) is refused; other keys are ignored, as the extension says.
   */
  update(taskId: string, inputResponses: JsonObject): TaskUpdate;
}

/** What a tasks/update did: nothing to update, answers applied, or answers that came too late (refused). */
export type TaskUpdate =
  | { readonly kind: 'not_found' }
  | { readonly kind: 'applied' }
  | { readonly kind: 'late'; readonly questionId: string; readonly message: string };

export interface ResourceDescriptor {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly mimeType: string;
}

export interface ResourceProvider {
  list(): readonly ResourceDescriptor[];
  /** Returns the text body (JSON) or throws a ResourceError. */
  read(uri: string): string;
}

/** A resource that exists but cannot be read right now (e.g. an incomplete work snapshot). */
export class ResourceError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'ResourceError';
    this.code = code;
  }
}

/** The providers the protocol core serves, and the end of everything they own (cli/serve, tools/providers). */
export interface Providers {
  readonly toolProvider: ToolProvider;
  readonly resourceProvider: ResourceProvider;
  /** Cancels every unsettled run and waits for its cleanup. */
  readonly close: () => Promise<void>;
  /** Starts the end of every unsettled run without waiting (signal shutdown: the supervisors finish it). */
  readonly stop: () => void;
}
