/**
 * The one place that decides which platform this process runs as: process.platform is read once, here, and
 * everything else asks hostPlatform(). Linux runs its own path; darwin the portable one (signals and the
 * system `ps`, no /proc); Windows is refused at start with `platform_unsupported`. Any other platform (freebsd,
 * aix, …) runs the portable path where its `ps` answers in the expected form (asked once, ps-probe.ts), and is
 * refused, naming why, otherwise.
 */
import type { PsFailure } from './ps-table.ts';
import { probePortablePs } from './ps-probe.ts';

export type PlatformDecision =
  | { readonly kind: 'linux' }
  | { readonly kind: 'darwin' }
  | { readonly kind: 'refused'; readonly platform: string; readonly message: string };

/** A platform this product runs on: the decision a server hands every supervisor it starts. */
export type SupportedPlatform = Exclude<PlatformDecision['kind'], 'refused'>;
export const SUPPORTED_PLATFORMS = ['linux', 'darwin'] as const satisfies readonly SupportedPlatform[];

/** The stable code of a start refused for its platform (CLI line, server line, library error). */
export const PLATFORM_UNSUPPORTED = 'platform_unsupported';

/**
 * The decision for a `process.platform` value. `portablePs` is asked only for a platform that is neither Linux,
 * macOS nor Windows: null when the system ps answers as the portable path needs, else why not (it names ps).
 */
export function decidePlatform(platform: string, portablePs: () => PsFailure | null): PlatformDecision {
  if (platform === 'linux') return { kind: 'linux' };
  if (platform === 'darwin') return { kind: 'darwin' };
  const name = platform.length > 32 ? `${platform.slice(0, 32)}…` : platform;
  if (platform === 'win32')
    return {
      kind: 'refused',
      platform: name,
      message:
        'claude-run-mcp does not run on Windows (win32): it needs POSIX process groups and signals to end every process a run starts. Run it inside WSL2, where it runs as on Linux.',
    };
  const ps = portablePs();
  if (ps === null) return { kind: 'darwin' };
  const message = `claude-run-mcp does not run on ${name}: it runs on Linux and macOS (also inside WSL2 on Windows), and elsewhere only where the system ps answers as BSD ps and procps do, which here it does not (${ps.message.slice(0, 200)}, ${ps.code}).`;
  return { kind: 'refused', platform: name, message };
}

let decided: PlatformDecision | null = null;

/** This process's decision, from process.platform read the first time only. */
export function hostPlatform(): PlatformDecision {
  decided ??= decidePlatform(process.platform, () => probePortablePs(process.env['PATH'] ?? '', process.pid));
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
