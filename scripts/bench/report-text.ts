/** The fixed prose of docs/benchmarks.md: how each figure is taken, and the limits behind any missed target. */

export const METHOD = `## How each figure is taken

TODO`;

export const LIMITS = `## Limits

TODO`;
