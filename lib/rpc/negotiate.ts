/**
 * The protocol dates this code really implements, the two eras they fall into, and everything that
 * differs per date. This file is the one place that says what differs; handlers ask `features`.
 *
 * Legacy dates (2025-11-25 and earlier) open with `initialize`, which negotiates one date for the whole
 * process. Modern dates (2026-07-28) have no handshake: every request names its date, client info and
 * capabilities in `_meta` and is served on its own. One process serves both eras at once.
 */

/** The dates `initialize` can agree to, newest first. Never add a date before its behaviour is implemented and tested. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
/** The handshake-free dates, served per request (never agreed to by `initialize`). */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;
/** What `server/discover` and -32022 advertise: every date, newest first, so a client can always fall back. */
export const ALL_PROTOCOL_VERSIONS = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS] as const;

/** A date `initialize` can negotiate (kept under this name for library users). */
export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];
export type ModernProtocolVersion = (typeof MODERN_PROTOCOL_VERSIONS)[number];
/** Any date a request can be served under. */
export type AnyProtocolVersion = ProtocolVersion | ModernProtocolVersion;
export type ProtocolEra = 'legacy' | 'modern';

export const LATEST_PROTOCOL_VERSION: ProtocolVersion = SUPPORTED_PROTOCOL_VERSIONS[0];

export function isSupportedVersion(value: unknown): value is ProtocolVersion {
  return typeof value === 'string' && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(value);
}

export function isModernVersion(value: unknown): value is ModernProtocolVersion {
  return typeof value === 'string' && (MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(value);
}

/**
 * A supported legacy request is echoed; anything else (unknown, malformed, missing, and also a modern
 * date, which has no handshake) gets the newest legacy date.
 */
export function negotiateVersion(requested: unknown): ProtocolVersion {
  return isSupportedVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

export function eraOf(version: AnyProtocolVersion): ProtocolEra {
  return isModernVersion(version) ? 'modern' : 'legacy';
}

// Dates are ISO strings, so lexical order is chronological order.
const atLeast = (version: AnyProtocolVersion, date: AnyProtocolVersion): boolean => version >= date;
const modern = (v: AnyProtocolVersion): boolean => eraOf(v) === 'modern';

/** What differs by date, in one table-like place (with eraFeatures below). */
export const features = {
  /** JSON-RPC batches must be accepted (2025-03-26 only; removed again in 2025-06-18). */
  batching: (v: AnyProtocolVersion): boolean => v === '2025-03-26',
  /** Tool annotations exist. */
  toolAnnotations: (v: AnyProtocolVersion): boolean => atLeast(v, '2025-03-26'),
  /** notifications/progress carries `message`. */
  progressMessage: (v: AnyProtocolVersion): boolean => atLeast(v, '2025-03-26'),
  /** outputSchema / structuredContent and `title` on tools and resources. */
  structuredContent: (v: AnyProtocolVersion): boolean => atLeast(v, '2025-06-18'),
  titles: (v: AnyProtocolVersion): boolean => atLeast(v, '2025-06-18'),
  /** Argument-validation failures are tool execution errors (isError), not -32602. */
  validationAsToolError: (v: AnyProtocolVersion): boolean => atLeast(v, '2025-11-25'),
} as const satisfies Record<string, (v: AnyProtocolVersion) => boolean>;

/** What the 2026-07-28 revision changed beyond the per-date features above (the era boundary). */
export const eraFeatures = {
  /** `ping` exists (removed in 2026-07-28). */
  ping: (v: AnyProtocolVersion): boolean => !modern(v),
  /** `server/discover` and per-request `_meta` (protocol version, client info, capabilities): no handshake. */
  perRequestMeta: (v: AnyProtocolVersion): boolean => modern(v),
  /** Every result carries `resultType` and `_meta["io.modelcontextprotocol/serverInfo"]`. */
  resultType: (v: AnyProtocolVersion): boolean => modern(v),
  /** tools/list, resources/list and resources/read carry `ttlMs` and `cacheScope`. */
  cacheableResults: (v: AnyProtocolVersion): boolean => modern(v),
  /** resources/read of an unknown URI is -32602 (it was -32002). */
  resourceNotFoundIsInvalidParams: (v: AnyProtocolVersion): boolean => modern(v),
  /** The tasks extension (io.modelcontextprotocol/tasks): tasks/get, tasks/cancel, tasks/update, task results. */
  tasksExtension: (v: AnyProtocolVersion): boolean => modern(v),
} as const satisfies Record<string, (v: AnyProtocolVersion) => boolean>;
