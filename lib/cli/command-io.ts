/** What a one-shot command (print, check) gets from the composition root: its environment and its two streams. */
export interface CommandIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** print writes the native result's bytes as they came; check writes its report as text. */
  readonly stdout: (chunk: string | Uint8Array) => void;
  readonly stderr: (text: string) => void;
}
