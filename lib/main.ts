/**
 * The composition root: picks a role from argv[2] and exits with its code.
 * `serve` is the default, also when the first argument is an option. `__supervisor` is the private
 * role of the supervisor child when running from the single-file bundle.
 */
type Role = (args: readonly string[]) => Promise<number>;

// Roles load lazily so each pays only for its own modules.
const ROLES = {
  serve: async (args) => (await import('./cli/serve.ts')).runServe(args),
  print: async (args) =>
    (await import('./cli/print.ts')).runPrint(args, {
      env: process.env,
      cwd: process.cwd(),
      stdout: (bytes) => { process.stdout.write(bytes); },
      stderr: (text) => { process.stderr.write(text); },
    }),
  check: async (args) => {
    const { runCheck } = await import('./cli/check.ts');
    const i = args.indexOf('--claude-bin');
    return runCheck({ cliFlag: i >= 0 ? args[i + 1] : undefined, env: process.env, cwd: process.cwd(), write: (text) => { process.stdout.write(text); } });
  },
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

if (process.argv[2] === '__supervisor') {
  // The supervisor owns its stdio from the first instruction: nothing else may write to it.
  const { runSupervisor } = await import('./supervisor/main.ts');
  runSupervisor();
} else {
  // process.exit after the role finished: every role has already cleaned up what it owns, and stdout
  // writes to pipes and files are synchronous on POSIX, so nothing queued is lost.
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`claude-run-mcp: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
