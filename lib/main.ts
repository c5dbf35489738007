/**
 * The composition root: picks a role from argv[2] and exits with its code.
 * `serve` is the default, also when the first argument is an option.
 */
type Role = (args: readonly string[]) => Promise<number>;

// Roles load lazily so each pays only for its own modules.
const ROLES = {
  serve: async (args) => (await import('./cli/serve.ts')).runServe(args),
} as const satisfies Record<string, Role>;

async function main(argv: readonly string[]): Promise<number> {
  const first = argv[0];
  if (first === undefined || first.startsWith('-')) return ROLES.serve(argv);
  if (!Object.hasOwn(ROLES, first)) {
    process.stderr.write(`claude-run-mcp: unknown command: ${first.slice(0, 64)} (known: ${Object.keys(ROLES).join(', ')})\n`);
    return 2;
  }
  return ROLES[first as keyof typeof ROLES](argv.slice(1));
}

// process.exit after the role finished: every role has already cleaned up what it owns, and stdout
// writes to pipes and files are synchronous on POSIX, so nothing queued is lost.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`claude-run-mcp: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
