import { ToolError } from '../tool-errors.ts';

/**
 * Refuses allow/deny combinations that fail open. A deny rule that carves a narrower command out of a
 * broader allow (allow `Bash(git:*)`, deny `Bash(git commit:*)`) is matched by prefix, so any spelling
 * that puts something before the subcommand (`git -C . commit`, `env git commit`) passes the allow and
 * misses the deny. Failing closed means allowing exactly what is wanted instead.
 */
export function checkPermissionRules(allowed: readonly string[], disallowed: readonly string[]): void {
  // The native CLI splits one list item on commas and whitespace outside parentheses ("Bash Write").
  // The message names both rules by their JSON path only, never by their text.
  const allowRules = allowed.flatMap((item, ai) => splitRules(item).map((rule) => ({ ai, rule })));
  for (const [di, item] of disallowed.entries())
    for (const deny of splitRules(item)) {
      const denyRule = parseRule(deny);
      if (!denyRule || denyRule.spec === null) continue;
      for (const { ai, rule } of allowRules) {
        const allowRule = parseRule(rule);
        if (!allowRule || allowRule.tool !== denyRule.tool) continue;
        if (allowRule.spec === null || isNarrowerThan(denyRule.spec, allowRule.spec)) {
          throw new ToolError(
            'permission_rule_fails_open',
            `/disallowed_tools/${di} carves an exception out of a broader rule for the same tool at /allowed_tools/${ai}. ` +
              'Prefix rules match the start of a command, so a flag or wrapper placed before the subcommand ' +
              'passes the broad allow and misses the deny: this fails open. Allow only the exact commands you ' +
              'want instead (for example Bash(git status:*) and Bash(git diff:*)), and do not rely on a deny carve-out.',
            `/disallowed_tools/${di}`,
          );
        }
      }
    }
}

interface Rule {
  readonly tool: string;
  readonly spec: string | null;
}

/** Splits one list item into rules at commas and whitespace that are not inside parentheses. */
export function splitRules(item: string): string[] {
  const rules: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of item) {
    if (ch === '(') depth += 1;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && (ch === ',' || /\s/.test(ch))) {
      if (current !== '') rules.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (current !== '') rules.push(current);
  return rules;
}

function parseRule(rule: string): Rule | null {
  const match = /^([A-Za-z0-9_.-]+)(?:\((.*)\))?$/s.exec(rule.trim());
  if (!match || match[1] === undefined) return null;
  const spec = match[2];
  return { tool: match[1], spec: spec === undefined || spec === '' || spec === '*' ? null : spec };
}

function prefixOf(spec: string): string {
  return spec.endsWith(':*') ? spec.slice(0, -2) : spec.endsWith('*') ? spec.slice(0, -1) : spec;
}

function isNarrowerThan(deny: string, allow: string): boolean {
  if (!allow.endsWith('*')) return false; // an exact allow cannot be carved
  const allowPrefix = prefixOf(allow).trimEnd();
  const denyPrefix = prefixOf(deny).trimEnd();
  return denyPrefix !== allowPrefix && denyPrefix.startsWith(allowPrefix);
}
