import { readFileSync } from 'node:fs';

/**
 * Reads wrangler's `.dev.vars` (dotenv syntax: `KEY=value`, `#` comments,
 * optional quotes). wrangler reads it for the Worker; the local stack reads it
 * too, so the runner gets the harness keys and `PORT` is honoured.
 */
export function readDevVars(path = '.dev.vars'): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return {};
  }
  const vars: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match || line.trimStart().startsWith('#')) continue;
    let value = match[2]!;
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.endsWith(quote) && value.length >= 2) value = value.slice(1, -1);
    vars[match[1]!] = value;
  }
  return vars;
}
