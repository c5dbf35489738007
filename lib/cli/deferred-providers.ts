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

export function deferProviders(
  load: () => Promise<Providers>,
  log: (line: string) => void,
  options: DeferOptions = { withTasks: false },
): DeferredProviders {
  let composed: Providers | null = null;
  let failure: string | null = null;
  let loading: Promise<void> | null = null;
  let ended = false;
  // Set once the first message waits: from then on everything queues behind it, in arrival order.
  let queued = false;

  const start = (): Promise<void> => {
    if (ended && loading === null) return Promise.resolve();
    return (loading ??= load().then(
      (providers) => {
        composed = providers;
        // Ended while loading (stdin EOF or a signal before any message needed the providers): nothing ran yet.
        if (ended) providers.stop();
      },
      (error: unknown) => {
        failure = error instanceof Error ? error.message : String(error);
        log(`the tool providers failed to load: ${failure}`);
      },
    ));
  };

  const current = (): Providers => {
    if (composed !== null) return composed;
    throw new Error(
      failure === null ? 'the tool providers are used before they were composed' : `the tool providers failed to load: ${failure}`,
    );
  };

  const composedTasks = (): TaskProvider => {
    const tasks = current().toolProvider.tasks;
    if (tasks === undefined) throw new Error('the tool providers were declared to serve tasks and do not');
    return tasks;
  };
  // Only its presence is read before the load (by server/discover); every method is used after it.
  const taskForwarder: TaskProvider = {
    supports: (name) => composedTasks().supports(name),
    start: (name, args, ctx) => composedTasks().start(name, args, ctx),
    get: (taskId) => composedTasks().get(taskId),
    cancel: (taskId) => composedTasks().cancel(taskId),
    update: (taskId, inputResponses) => composedTasks().update(taskId, inputResponses),
  };
  const toolProvider: ToolProvider = {
    list: () => current().toolProvider.list(),
    call: (name, args, ctx) => current().toolProvider.call(name, args, ctx),
    get tasks() {
      return options.withTasks ? taskForwarder : current().toolProvider.tasks;
    },
  };

  return {
    providers: {
      toolProvider,
      resourceProvider: {
        list: () => current().resourceProvider.list(),
        read: (uri) => current().resourceProvider.read(uri),
      },
      close: async () => {
        ended = true;
        if (loading !== null) await loading;
        await composed?.close();
      },
      stop: () => {
        ended = true;
        composed?.stop();
      },
    },
    gate: (handle) => (message) => {
      if (composed !== null || failure !== null || (!queued && needsNoProviders(message))) return handle(message);
      queued = true;
      return start().then(() => handle(message));
    },
    start: () => {
      void start();
    },
  };
}
