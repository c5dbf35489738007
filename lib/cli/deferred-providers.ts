/**
 * The server's providers, loaded after the handshake can be answered. The tool layer (tools/, runs/, native/,
 * supervisor/parent/, permission/ and the cli-tree check) is about half of the bundle's modules; the
 * handshake needs none of it. So the stdio server starts with forwarding providers, answers `initialize`,
 * `notifications/initialized` and `ping` at once, and loads and composes the real providers right after
 * (docs/benchmarks.md, cold start). `server/discover` too: it is the modern era's first line, and a host
 * gives it a deadline (Claude Code: 3 s from spawn, then a legacy session without tasks), while its
 * answer needs only to know that the providers will serve tasks, which the loader declares up front. Any
 * other message waits for them, and once one waits every later one
 * waits behind it, so messages are still handled in the order they arrived. A load failure is logged and
 * each waiting request then fails on its own (the forwarders throw), never silently.
 */
import type { Providers, TaskProvider, ToolProvider } from '../contracts/providers.ts';

/**
 * Handled without the providers: the legacy handshake, ping, and the modern probe (which reads only whether a
 * task provider exists; the forwarding one answers that before the load).
 */
export const METHODS_WITHOUT_PROVIDERS: readonly string[] = ['initialize', 'notifications/initialized', 'ping', 'server/discover'];

export interface DeferredProviders {
  /** Forwarders to the composed providers; a call before they are composed throws (the gate prevents it). */
  readonly providers: Providers;
  /** Wraps an adapter's handle(): messages other than METHODS_WITHOUT_PROVIDERS wait until the providers are composed. */
  gate(handle: (message: unknown) => Promise<unknown>): (message: unknown) => Promise<unknown>;
  /** Starts loading (idempotent; the first gated message starts it too). */
  start(): void;
}

/** True for a single request or notification whose method needs no provider; a batch always waits. */
export function needsNoProviders(message: unknown): boolean {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return false;
  const method = (message as Record<string, unknown>)['method'];
  return typeof method === 'string' && METHODS_WITHOUT_PROVIDERS.includes(method);
}

export interface DeferOptions {
  /** The loaded tool provider will serve tasks: the forwarders say so before the load (server/discover reads it). */
  readonly withTasks: boolean;
}

/** What the forwarders share: the load, its outcome, and whether the server is ending. */
interface DeferredState {
  readonly load: () => Promise<Providers>;
  readonly log: (line: string) => void;
  composed: Providers | null;
  failure: string | null;
  loading: Promise<void> | null;
  ended: boolean;
  /** Set once the first message waits: from then on everything queues behind it, in arrival order. */
  queued: boolean;
}

export function deferProviders(
  load: () => Promise<Providers>,
  log: (line: string) => void,
  options: DeferOptions = { withTasks: false },
): DeferredProviders {
  const d: DeferredState = { load, log, composed: null, failure: null, loading: null, ended: false, queued: false };
  const taskForwarder = forwardTasks(d);
  const toolProvider: ToolProvider = {
    list: () => current(d).toolProvider.list(),
    call: (name, args, ctx) => current(d).toolProvider.call(name, args, ctx),
    get tasks() {
      return options.withTasks ? taskForwarder : current(d).toolProvider.tasks;
    },
  };
  return {
    providers: {
      toolProvider,
      resourceProvider: {
        list: () => current(d).resourceProvider.list(),
        read: (uri) => current(d).resourceProvider.read(uri),
      },
      close: () => closeDeferred(d),
      stop: () => {
        d.ended = true;
        d.composed?.stop();
      },
    },
    gate: (handle) => (message) => {
      if (d.composed !== null || d.failure !== null || (!d.queued && needsNoProviders(message))) return handle(message);
      d.queued = true;
      return startLoad(d).then(() => handle(message));
    },
    start: () => {
      void startLoad(d);
    },
  };
}

function startLoad(d: DeferredState): Promise<void> {
  if (d.ended && d.loading === null) return Promise.resolve();
  return (d.loading ??= d.load().then(
    (providers) => {
      d.composed = providers;
      // Ended while loading (stdin EOF or a signal before any message needed the providers): nothing ran yet.
      if (d.ended) providers.stop();
    },
    (error: unknown) => {
      d.failure = error instanceof Error ? error.message : String(error);
      d.log(`the tool providers failed to load: ${d.failure}`);
    },
  ));
}

function current(d: DeferredState): Providers {
  if (d.composed !== null) return d.composed;
  throw new Error(
    d.failure === null ? 'the tool providers are used before they were composed' : `the tool providers failed to load: ${d.failure}`,
  );
}

/** Only its presence is read before the load (by server/discover); every method is used after it. */
function forwardTasks(d: DeferredState): TaskProvider {
  const composedTasks = (): TaskProvider => {
    const tasks = current(d).toolProvider.tasks;
    if (tasks === undefined) throw new Error('the tool providers were declared to serve tasks and do not');
    return tasks;
  };
  return {
    supports: (name) => composedTasks().supports(name),
    start: (name, args, ctx) => composedTasks().start(name, args, ctx),
    get: (taskId) => composedTasks().get(taskId),
    cancel: (taskId) => composedTasks().cancel(taskId),
    update: (taskId, inputResponses) => composedTasks().update(taskId, inputResponses),
  };
}

async function closeDeferred(d: DeferredState): Promise<void> {
  d.ended = true;
  if (d.loading !== null) await d.loading;
  await d.composed?.close();
}
