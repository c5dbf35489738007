/**
 * Machine-code stand-ins for Claude Code and for the version managers people install it with, built with
 * the system C compiler into a private directory:
 * - `versions/<v>`: a fake CLI that answers `--version` with `<v> (Claude Code)`, prints one result line
 *   otherwise, and records every start (`records/<pid>-<v>`, its argv one per line);
 * - `shims/exec/claude` and `shims/fork/claude`: symlinks (as mise's and volta's are) to a launcher that
 *   picks the version from `claude-version` in its cwd, else from `<home>/default`, and then execs it (as
 *   mise does) or runs it as a child and waits (as volta does). The shim never changes when the pick does.
 * Each program sleeps 20 ms first: a real CLI takes well over 100 ms to answer, and the supervisor looks at
 * a probe's image right after it started (a probe gone within microseconds is bound to no image).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type ShimKind = 'exec' | 'fork';

export interface ElfShims {
  readonly home: string;
  /** A fake CLI binary of this version (built on first use). */
  version(v: string): string;
  /** The shim path of a kind (a symlink to the launcher binary). */
  shim(kind: ShimKind): string;
  /** The version the shims pick outside a pinned directory (an upgrade changes only this). */
  setDefault(v: string): void;
  /** A new directory pinned to a version, as a project's `.tool-versions` or `package.json` pins it. */
  pinnedDir(v: string): string;
  /** Every start of a fake CLI so far: its version and argv. */
  records(): { version: string; argv: string[] }[];
  /** Points `link` at `target` atomically, as an upgrade re-links a bin. */
  relink(link: string, target: string): void;
  cleanup(): void;
}

const FAKE_CLI = String.raw`
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
  usleep(20000);
  char path[4096];
  snprintf(path, sizeof path, "%s/%d-%s", RECORDS, (int)getpid(), VERSION);
  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  for (int i = 1; i < argc && fd >= 0; i++) { dprintf(fd, "%s\n", argv[i]); }
  if (fd >= 0) close(fd);
  if (argc > 1 && strcmp(argv[1], "--version") == 0) { printf("%s (Claude Code)\n", VERSION); return 0; }
  printf("{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"%s\"}\n", VERSION);
  return 0;
}
`;

const LAUNCHER = String.raw`
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static int first_line(const char *path, char *out, size_t size) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return 0;
  int ok = fgets(out, (int)size, f) != NULL;
  fclose(f);
  out[strcspn(out, "\n")] = 0;
  return ok && out[0] != 0;
}
int main(int argc, char **argv) {
  (void)argc;
  usleep(20000);
  char version[256], target[4096];
  if (!first_line("claude-version", version, sizeof version) && !first_line(HOME "/default", version, sizeof version)) return 126;
  snprintf(target, sizeof target, "%s/versions/%s", HOME, version);
#if FORK
  pid_t child = fork();
  if (child == 0) { execv(target, argv); _exit(127); }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) < 0) return 125;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 124;
#else
  execv(target, argv);
  return 127;
#endif
}
`;

function compile(source: string, out: string, defines: Record<string, string>): void {
  const src = `${out}.c`;
  writeFileSync(src, source);
  const flags = Object.entries(defines).map(([k, v]) => `-D${k}=${v}`);
  execFileSync('cc', ['-O1', '-o', out, src, ...flags], { stdio: ['ignore', 'ignore', 'inherit'] });
  chmodSync(out, 0o755);
}

const cString = (value: string): string => JSON.stringify(value);

export function makeElfShims(): ElfShims {
  const home = mkdtempSync(join(tmpdir(), 'elf-shims-'));
  const records = join(home, 'records');
  for (const dir of ['records', 'versions', 'bin', 'shims/exec', 'shims/fork', 'projects']) mkdirSync(join(home, dir), { recursive: true });
  const version = (v: string): string => {
    const out = join(home, 'versions', v);
    if (!readdirSync(join(home, 'versions')).includes(v)) compile(FAKE_CLI, out, { VERSION: cString(v), RECORDS: cString(records) });
    return out;
  };
  for (const kind of ['exec', 'fork'] as const) {
    const launcher = join(home, 'bin', `launcher-${kind}`);
    compile(LAUNCHER, launcher, { HOME: cString(home), FORK: kind === 'fork' ? '1' : '0' });
    symlinkSync(launcher, join(home, 'shims', kind, 'claude'));
  }
  let pinned = 0;
  return {
    home,
    version,
    shim: (kind) => join(home, 'shims', kind, 'claude'),
    setDefault(v) {
      version(v);
      writeFileSync(join(home, 'default.next'), `${v}\n`);
      renameSync(join(home, 'default.next'), join(home, 'default'));
    },
    pinnedDir(v) {
      version(v);
      const dir = join(home, 'projects', `p${pinned++}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'claude-version'), `${v}\n`);
      return dir;
    },
    records: () =>
      readdirSync(records).map((name) => ({
        version: name.slice(name.indexOf('-') + 1),
        argv: readFileSync(join(records, name), 'utf8')
          .split('\n')
          .filter((line) => line !== ''),
      })),
    relink(link, target) {
      const next = `${link}.next`;
      symlinkSync(target, next);
      renameSync(next, link);
    },
    cleanup: () => {
      rmSync(home, { recursive: true, force: true });
    },
  };
}
