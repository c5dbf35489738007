// What the worktree specs share: the fake model's scenarios (each run writes its own content into one file,
// or commits a note) and a small git repository to run in.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Scenario } from '../../fixtures/fake-anthropic/server.ts';

export const NAMES = ['w1', 'w2', 'w3', 'w4'] as const;
export const contentOf = (name: string): string => `content of ${name}\n`;
export const IDENTITY = ['-c', 'user.name=Fake', '-c', 'user.email=fake@example.invalid'];

const writeScenario = (name: string): Scenario => ({
  kind: 'tool_use',
  tool: 'Bash',
  preambleText: '',
  input: { command: `printf '${contentOf(name).trimEnd()}\\n' > shared.txt`, description: 'Write the shared file' },
  followUpText: `wrote ${name}`,
});
export const SCENARIOS: Record<string, Scenario> = {
  ...Object.fromEntries(NAMES.map((name) => [`write_${name}`, writeScenario(name)])),
  commit_note: {
    kind: 'tool_use',
    tool: 'Bash',
    preambleText: '',
    input: {
      command: `printf 'a\\nb\\n' > note.txt && git add note.txt && git ${IDENTITY.join(' ')} commit -q -m note`,
      description: 'Commit a note',
    },
    followUpText: 'committed',
  },
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', timeout: 10_000, env: { PATH: '/usr/bin:/bin', HOME: cwd, LC_ALL: 'C' } });
}

/** A repository with one commit: shared.txt holds "original". Returns the commit. */
export function makeRepository(cwd: string): string {
  git(cwd, 'init', '-q', '-b', 'main');
  writeFileSync(join(cwd, 'shared.txt'), 'original\n');
  git(cwd, 'add', 'shared.txt');
  git(cwd, ...IDENTITY, 'commit', '-q', '-m', 'initial');
  return git(cwd, 'rev-parse', 'HEAD').trim();
}
