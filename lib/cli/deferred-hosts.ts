/**
 * The server's hosts, loaded after the handshake can be answered. The tool layer (tools/, runs/, native/,
 * supervisor/parent/, permission/ and the cli-tree check) is about half of the bundle's modules; the
 * handshake needs none of it. So the stdio server starts with forwarding hosts, answers `initialize`,
 * `notifications/initialized` and `ping` at once, and loads and composes the real hosts right after
 * (docs/benchmarks.md, cold start). `server/discover` too: it is the modern era's first line, and a host
 * gives it a deadline (Claude Code: 3 s from spawn, then a legacy session without tasks), while its
 * answer needs only to know that the hosts will serve tasks, which the loader declares up front. Any
 * other message waits for them, and once one waits every later one
 * waits behind it, so messages are still handled in the order they arrived. A load failure is logged and
 * each waiting request then fails on its own (the forwarders throw), never silently.
 */
import type { HostBundle, TaskHost, ToolHost } from '../mcp/types.ts';

/**
 * Handled without the hosts: the legacy handshake, ping, and the modern probe (which reads only whether a
 * task host exists; the forwarding one answers that before the load).
 */
export const METHODS_WITHOUT_HOSTS: readonly string[] = ['initialize', 'notifications/initialized', 'ping', 'server/discover'];

export interface DeferredHosts {
  /** Forwarders to the composed hosts; a call before they are composed throws (the gate prevents it). */
  readonly hosts: HostBundle;
  /** Wraps an adapter's handle(): messages other than METHODS_WITHOUT_HOSTS wait until the hosts are composed. */
  gate(handle: (message: unknown) => Promise<unknown>): (message: unknown) => Promise<unknown>;
  /** Starts loading (idempotent; the first gated message starts it too). */
  start(): void;
}

/** True for a single request or notification whose method needs no host; a batch always waits. */
export function needsNoHosts(message: unknown): boolean {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return false;
  const method = (message as Record<string, unknown>)['method'];
  return typeof method === 'string' && METHODS_WITHOUT_HOSTS.includes(method);
}

export interface DeferOptions {
  /** The loaded tool host will serve tasks: the forwarders say so before the load (server/discover reads it). */
  readonly withTasks: boolean;
}

export function deferHosts(load: () => Promise<HostBundle>, log: (line: string) => void, options: DeferOptions = { withTasks: false }): DeferredHosts {
  let composed: HostBundle | null = null;
  let failure: string | null = null;
  let loading: Promise<void> | null = null;
  let ended = false;
  // Set once the first message waits: from then on everything queues behind it, in arrival order.
  let queued = false;

  const start = (): Promise<void> => {
    if (ended && loading === null) return Promise.resolve();
    return (loading ??= load().then(
      (hosts) => {
        composed = hosts;
        // Ended while loading (stdin EOF or a signal before any message needed the hosts): nothing ran yet.
        if (ended) hosts.stop();
      },
      (error: unknown) => {
        failure = error instanceof Error ? error.message : String(error);
        log(`the tool hosts failed to load: ${failure}`);
      },
    ));
  };

  const current = (): HostBundle => {
    if (composed !== null) return composed;
    throw new Error(failure === null ? 'the tool hosts are used before they were composed' : `the tool hosts failed to load: ${failure}`);
  };

  const composedTasks = (): TaskHost => {
    const tasks = current().toolHost.tasks;
    if (tasks === undefined) throw new Error('the tool hosts were declared to serve tasks and do not');
    return tasks;
  };
  // Only its presence is read before the load (by server/discover); every method is used after it.
  const taskForwarder: TaskHost = {
    supports: (name) => composedTasks().supports(name),
    start: (name, args, ctx) => composedTasks().start(name, args, ctx),
    get: (taskId) => composedTasks().get(taskId),
    cancel: (taskId) => composedTasks().cancel(taskId),
    update: (taskId, inputResponses) => composedTasks().update(taskId, inputResponses),
  };
  const toolHost: ToolHost = {
    list: () => current().toolHost.list(),
    call: (name, args, ctx) => current().toolHost.call(name, args, ctx),
    get tasks() { return options.withTasks ? taskForwarder : current().toolHost.tasks; },
  };

  return {
    hosts: {
      toolHost,
      resourceHost: {
        list: () => current().resourceHost.list(),
        read: (uri) => current().resourceHost.read(uri),
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
      if (composed !== null || failure !== null || (!queued && needsNoHosts(message))) return handle(message);
      queued = true;
      return start().then(() => handle(message));
    },
    start: () => { void start(); },
  };
}
