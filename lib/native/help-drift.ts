/**
 * Maintainer drift check, never used at runtime: parses the Options section of `claude --help`
 * (commander layout) and compares it with the tree. Pure.
 *
 * Verdict: a declared flag that is gone from help (unless verified-hidden), or whose value shape or
 * choices changed, is drift and fails the check. Help options the tree does not declare are listed as
 * `not_declared`: informational, because the tree is explicitly partial.
 */
import type { CliTree } from './tree.ts';

export interface HelpOption {
  /** Every spelling, e.g. ['-c', '--continue'] or ['--allowedTools', '--allowed-tools']. */
  readonly names: readonly string[];
  /** Value placeholder without brackets (`tools...`), or null for a switch. */
  readonly valueName: string | null;
  readonly valueOptional: boolean;
  readonly variadic: boolean;
  /** commander `(choices: "a", "b")`, else null. */
  readonly choices: readonly string[] | null;
  readonly description: string;
}

export interface DriftChange {
  readonly flag: string;
  readonly what: 'value' | 'variadic' | 'choices';
  readonly expected: string;
  readonly actual: string;
}

export interface DriftReport {
  readonly ok: boolean;
  readonly removed: readonly string[];
  readonly changed: readonly DriftChange[];
  /** Native options the tree does not declare (informational). */
  readonly not_declared: readonly string[];
  /** verified-hidden options that are (still) absent from help, as expected. */
  readonly hidden_verified: readonly string[];
  /** verified-hidden options that help now lists (informational: the tree can say source help). */
  readonly hidden_now_listed: readonly string[];
}

const OPTION_LINE = /^ {2}(-.*)$/;
const HEADER = /^((?:-{1,2}[A-Za-z0-9][\w-]*)(?:, -{1,2}[A-Za-z0-9][\w-]*)*)(?: ([<[][^>\]]+[>\]]))?(?: {2,}(.*))?$/;

/** Option entries of the help's `Options:` section, in help order. */
export function parseHelpOptions(help: string): HelpOption[] {
  const lines = help.split('\n');
  const start = lines.findIndex((line) => line.trim() === 'Options:');
  if (start < 0) return [];
  const entries: { header: string; description: string[] }[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() !== '' && !line.startsWith(' ')) break; // next section, e.g. "Commands:"
    const option = OPTION_LINE.exec(line);
    if (option?.[1] !== undefined) entries.push({ header: option[1], description: [] });
    else if (line.trim() !== '') entries.at(-1)?.description.push(line.trim());
  }
  return entries.flatMap(({ header, description }) => {
    const match = HEADER.exec(header.trimEnd());
    if (match?.[1] === undefined) return [];
    const placeholder = match[2] ?? null;
    const text = [match[3] ?? '', ...description].join(' ').trim();
    const inner = placeholder === null ? null : placeholder.slice(1, -1);
    return [
      {
        names: match[1].split(', '),
        valueName: inner,
        valueOptional: placeholder?.startsWith('[') ?? false,
        variadic: inner?.endsWith('...') ?? false,
        choices: parseChoices(text),
        description: text,
      },
    ];
  });
}

function parseChoices(description: string): string[] | null {
  const at = description.indexOf('(choices: ');
  if (at < 0) return null;
  const rest = description.slice(at + '(choices: '.length);
  const choices: string[] = [];
  const item = /^"([^"]*)"(?:, )?/;
  let remaining = rest;
  for (let m = item.exec(remaining); m !== null; m = item.exec(remaining)) {
    choices.push(m[1] ?? '');
    remaining = remaining.slice(m[0].length);
  }
  return choices.length > 0 ? choices : null;
}

/** Compares help with every flag the tree may emit (options, print mode, output-mode flags). */
export function compareHelpWithTree(help: readonly HelpOption[], tree: CliTree): DriftReport {
  const byName = new Map<string, HelpOption>();
  for (const option of help) for (const name of option.names) byName.set(name, option);
  const removed: string[] = [];
  const changed: DriftChange[] = [];
  const hiddenVerified: string[] = [];
  const hiddenNowListed: string[] = [];
  const declared = new Set<HelpOption>();

  for (const option of tree.options) {
    const found = byName.get(option.flag);
    if (found === undefined) {
      (option.source === 'verified-hidden' ? hiddenVerified : removed).push(option.flag);
      continue;
    }
    declared.add(found);
    if (option.source === 'verified-hidden') hiddenNowListed.push(option.flag);
    const takesValue = option.value !== 'none';
    if (takesValue !== (found.valueName !== null)) {
      changed.push({
        flag: option.flag,
        what: 'value',
        expected: takesValue ? 'a value' : 'no value',
        actual: found.valueName ?? 'no value',
      });
    } else if ((option.value === 'list') !== found.variadic) {
      changed.push({ flag: option.flag, what: 'variadic', expected: String(option.value === 'list'), actual: String(found.variadic) });
    }
    if (option.value === 'enum') {
      // The tree may declare a subset (permission modes); every declared choice must still exist.
      // Without commander choices (e.g. --effort), the choices must still be named in the description.
      const missing = option.choices.filter((choice) =>
        found.choices !== null ? !found.choices.includes(choice) : !new RegExp(`\\b${escapeRegExp(choice)}\\b`).test(found.description),
      );
      if (missing.length > 0)
        changed.push({
          flag: option.flag,
          what: 'choices',
          expected: option.choices.join(','),
          actual: (found.choices ?? ['(description)']).join(','),
        });
    }
  }
  checkFixedFlags(tree, byName, declared, removed, changed);

  const notDeclared = help.filter((option) => !declared.has(option)).map((option) => option.names.at(-1) ?? '');
  return {
    ok: removed.length === 0 && changed.length === 0,
    removed,
    changed,
    not_declared: notDeclared,
    hidden_verified: hiddenVerified,
    hidden_now_listed: hiddenNowListed,
  };
}

/** Print-mode, output-mode and version flags: each must exist, and a value after a choices flag must be a choice. */
function checkFixedFlags(
  tree: CliTree,
  byName: Map<string, HelpOption>,
  declared: Set<HelpOption>,
  removed: string[],
  changed: DriftChange[],
): void {
  const sequences = [tree.print_mode, ...Object.values(tree.output_modes), tree.native.version_args, tree.native.help_args];
  const seen = new Set<string>();
  for (const sequence of sequences) {
    sequence.forEach((token, i) => {
      if (!token.startsWith('-')) return;
      const found = byName.get(token);
      if (found === undefined) {
        if (!seen.has(token)) removed.push(token);
        seen.add(token);
        return;
      }
      declared.add(found);
      const next = sequence[i + 1];
      const key = `${token}=${String(next)}`;
      if (found.valueName !== null && next !== undefined && found.choices !== null && !found.choices.includes(next) && !seen.has(key)) {
        changed.push({ flag: token, what: 'choices', expected: next, actual: found.choices.join(',') });
      }
      seen.add(key);
    });
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
