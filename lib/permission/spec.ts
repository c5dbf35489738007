/**
 * How a run that asks its host is launched: the native's own permission prompt channel (cli-tree.json
 * `stdin_channel.permission_prompt_tool`, `--permission-prompt-tool stdio`), which sends each undecided tool
 * use as a can_use_tool control request on the native's stdout. Pure.
 */
import type { NativeArgv } from '../native/argv.ts';

export const DEFAULT_ASK_HOST_TIMEOUT_SECONDS = 180;
export const MAX_ASK_HOST_TIMEOUT_SECONDS = 3600;

export interface PromptToolWiring {
  /** The flag and its value (`--permission-prompt-tool`, `stdio`), as cli-tree.json declares them. */
  readonly flag: readonly [string, string];
  /** True when the caller left permission_mode unset: the run then uses the native `default` mode. */
  readonly useDefaultMode: boolean;
}

/**
 * The native argv with the stdio prompt tool: the flag pair, and, when the caller chose no mode,
 * `--permission-mode default` (the mode in which every undecided tool use is asked about). The prompt is
 * never in argv, so they are appended. A run without ask_host gets no prompt tool at all, so its mode
 * (dontAsk by default) decides alone, as before.
 */
export function withStdioPromptTool(argv: NativeArgv, wiring: PromptToolWiring): NativeArgv {
  const args = [...argv.args];
  if (wiring.useDefaultMode) {
    const at = args.indexOf('--permission-mode');
    if (at >= 0 && at + 1 < args.length) args[at + 1] = 'default';
  }
  args.push(...wiring.flag);
  return { ...argv, args };
}
