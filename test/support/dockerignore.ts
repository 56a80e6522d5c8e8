/**
 * .dockerignore matching as BuildKit does it (moby/patternmatcher): patterns
 * in order, `!` re-includes, the last pattern that matches wins, and a
 * pattern that matches a directory matches everything below it. Patterns are
 * cleaned paths relative to the context root; `*` and `?` stay within one
 * path segment, `**` spans any number of them, `\` escapes, `[...]` is a
 * class. Enough of the format for a test to check an ignore file; not a
 * general-purpose implementation.
 */
interface Pattern {
  exclusion: boolean;
  regexp: RegExp;
}

function clean(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return parts.join('/');
}

function toRegExp(pattern: string): RegExp {
  let out = '^';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '*') {
      if (pattern[i + 1] === '*') {
        i++;
        if (pattern[i + 1] === '/') i++;
        // `**` at the end matches everything; elsewhere, zero or more whole segments.
        out += i + 1 >= pattern.length ? '.*' : '(.*/)?';
      } else out += '[^/]*';
    } else if (ch === '?') out += '[^/]';
    else if (ch === '\\' && i + 1 < pattern.length) out += `\\${pattern[++i]}`;
    else if (ch === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end === -1) out += '\\[';
      else {
        out += `[${pattern.slice(i + 1, end).replace(/^!/, '^')}]`;
        i = end;
      }
    } else out += ch.replace(/[.+^${}()|/]/g, '\\$&');
  }
  return new RegExp(`${out}$`);
}

export function parseDockerignore(text: string): Pattern[] {
  const patterns: Pattern[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const exclusion = line.startsWith('!');
    if (exclusion) line = line.slice(1).trim();
    const cleaned = clean(line);
    if (cleaned === '') continue;
    patterns.push({ exclusion, regexp: toRegExp(cleaned) });
  }
  return patterns;
}

/** Whether `path` (relative to the context root) is left out of the build context. */
export function isIgnored(patterns: Pattern[], path: string): boolean {
  const file = clean(path);
  const parents = file.split('/').slice(0, -1);
  let ignored = false;
  for (const pattern of patterns) {
    let match = pattern.regexp.test(file);
    for (let i = 1; !match && i <= parents.length; i++) match = pattern.regexp.test(parents.slice(0, i).join('/'));
    if (match) ignored = !pattern.exclusion;
  }
  return ignored;
}
