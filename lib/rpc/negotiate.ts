/** Protocol-date negotiation over the dates this code really implements, and the features each has. */

/** Newest first. Never add a date before its behaviour is implemented and tested. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];

export const LATEST_PROTOCOL_VERSION: ProtocolVersion = SUPPORTED_PROTOCOL_VERSIONS[0];

export function isSupportedVersion(value: unknown): value is ProtocolVersion {
  return typeof value === 'string' && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(value);
}

/** A supported request is echoed; anything else (unknown, malformed, missing) gets the newest date. */
export function negotiateVersion(requested: unknown): ProtocolVersion {
  return isSupportedVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

// Dates are ISO strings, so lexical order is chronological order.
const atLeast = (version: ProtocolVersion, date: ProtocolVersion): boolean => version >= date;

/** What differs by negotiated date, in one table-like place. */
export const features = {
  /** JSON-RPC batches must be accepted (2025-03-26 only; removed again in 2025-06-18). */
  batching: (v: ProtocolVersion): boolean => v === '2025-03-26',
  /** Tool annotations exist. */
  toolAnnotations: (v: ProtocolVersion): boolean => atLeast(v, '2025-03-26'),
  /** notifications/progress carries `message`. */
  progressMessage: (v: ProtocolVersion): boolean => atLeast(v, '2025-03-26'),
  /** outputSchema / structuredContent and `title` on tools and resources. */
  structuredContent: (v: ProtocolVersion): boolean => atLeast(v, '2025-06-18'),
  titles: (v: ProtocolVersion): boolean => atLeast(v, '2025-06-18'),
  /** Argument-validation failures are tool execution errors (isError), not -32602. */
  validationAsToolError: (v: ProtocolVersion): boolean => atLeast(v, '2025-11-25'),
} as const satisfies Record<string, (v: ProtocolVersion) => boolean>;
