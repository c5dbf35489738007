/**
 * The one place that decides which platform this process runs as: process.platform is read once, here, and
 * everything else asks hostPlatform(). Linux is supported; darwin is named so its portable path can be chosen
 * from this decision; Windows and every other platform are refused at start with `platform_unsupported`.
 */

export type PlatformDecision =
  | { readonly kind: 'linux' }
  | { readonly kind: 'darwin' }
  | { readonly kind: 'refused'; readonly platform: string; readonly message: string };

/** A platform this product runs on: the decision a server hands every supervisor it starts. */
export type SupportedPlatform = Exclude<PlatformDecision['kind'], 'refused'>;
export const SUPPORTED_PLATFORMS = ['linux', 'darwin'] as const satisfies readonly SupportedPlatform[];

/** The stable code of a start refused for its platform (CLI line, server line, library error). */
export const PLATFORM_UNSUPPORTED = 'platform_unsupported';

/** Pure: the decision for a `process.platform` value. */
export function decidePlatform(platform: string): PlatformDecision {
  if (platform === 'linux') return { kind: 'linux' };
  if (platform === 'darwin') return { kind: 'darwin' };
  const name = platform.length > 32 ? `${platform.slice(0, 32)}…` : platform;
  const message =
    platform === 'win32'
      ? 'claude-run-mcp does not run on Windows (win32): it needs POSIX process groups and signals to end every process a run starts. Run it inside WSL2, where it runs as on Linux.'
      : `claude-run-mcp does not run on ${name}: it runs on Linux (also inside WSL2 on Windows).`;
  return { kind: 'refused', platform: name, message };
}

let decided: PlatformDecision | null = null;

/** This process's decision, from process.platform read the first time only. */
export function hostPlatform(): PlatformDecision {
  decided ??= decidePlatform(process.platform);
  return decided;
}

/** This process's platform when it runs at all; throws PlatformUnsupported where the decision refused it. */
export function supportedPlatform(): SupportedPlatform {
  const decision = hostPlatform();
  if (decision.kind === 'refused') throw new PlatformUnsupported(decision);
  return decision.kind;
}

/** The library's refusal: an Error whose `code` is `platform_unsupported`, naming the platform. */
export class PlatformUnsupported extends Error {
  readonly code = PLATFORM_UNSUPPORTED;
  readonly platform: string;
  constructor(refused: Extract<PlatformDecision, { kind: 'refused' }>) {
    super(refused.message);
    this.name = 'PlatformUnsupported';
    this.platform = refused.platform;
  }
}

/** The CLI's and server's refusal: one JSON line (no newline) for stderr. */
export function platformRefusalLine(refused: Extract<PlatformDecision, { kind: 'refused' }>): string {
  return JSON.stringify({ error: { code: PLATFORM_UNSUPPORTED, message: refused.message, platform: refused.platform } });
}
