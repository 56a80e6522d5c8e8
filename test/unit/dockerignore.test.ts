import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isIgnored, parseDockerignore } from '../support/dockerignore.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const patterns = parseDockerignore(readFileSync(join(ROOT, '.dockerignore'), 'utf8'));

/** The sources of every COPY in the image's Dockerfile (all arguments but the destination; no flags). */
function copySources(dockerfile: string): string[] {
  const sources: string[] = [];
  for (const line of dockerfile.replace(/\\\r?\n/g, ' ').split(/\r?\n/)) {
    const match = /^\s*(?:COPY|ADD)\s+(.*)$/i.exec(line);
    if (!match) continue;
    const args = match[1]!.trim().split(/\s+/).filter((arg) => !arg.startsWith('--'));
    sources.push(...args.slice(0, -1));
  }
  return sources;
}

/** The repository's files under a COPY source (a file, or every tracked file of a directory). */
function filesOf(source: string): string[] {
  const path = join(ROOT, source);
  if (existsSync(path) && statSync(path).isFile()) return [source];
  return execFileSync('git', ['ls-files', '--', source], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
}

describe('the image build context (.dockerignore at the root; wrangler sends the Dockerfile on stdin)', () => {
  it('leaves out secrets and the repository: .dev.vars, .wrangler, node_modules, .git', () => {
    for (const path of ['.dev.vars', '.wrangler', '.wrangler/state/v3/do/x.sqlite', 'node_modules', 'node_modules/hono/package.json', '.git', '.git/config', 'container/node_modules/ws/index.js', 'container/.dev.vars', 'test/e2e/stack.ts', 'README.md']) {
      expect(isIgnored(patterns, path), path).toBe(true);
    }
  });

  it('keeps everything container/Dockerfile COPYs', () => {
    const sources = copySources(readFileSync(join(ROOT, 'container/Dockerfile'), 'utf8'));
    expect(sources).toEqual(expect.arrayContaining(['container/package.json', 'container/package-lock.json', 'src/protocol', 'container/src']));
    for (const source of sources) {
      const files = filesOf(source);
      expect(files.length, source).toBeGreaterThan(0);
      for (const file of files) expect(isIgnored(patterns, file), file).toBe(false);
    }
  });

  it('is the only ignore file: a <Dockerfile>.dockerignore would win over it in a by-hand BuildKit build', () => {
    expect(existsSync(join(ROOT, 'container/Dockerfile.dockerignore'))).toBe(false);
  });
});

describe('the matcher itself, on docker semantics', () => {
  it('matches a directory and everything below it, lets the last pattern win, and spans segments only with **', () => {
    const rules = parseDockerignore('# comment\n\n*\n!keep/**\nkeep/secret\n');
    expect(isIgnored(rules, 'a')).toBe(true);
    expect(isIgnored(rules, 'a/b/c')).toBe(true);
    expect(isIgnored(rules, 'keep/x/y.ts')).toBe(false);
    expect(isIgnored(rules, 'keep/secret')).toBe(true);
    const star = parseDockerignore('docs/*.md\n');
    expect(isIgnored(star, 'docs/a.md')).toBe(true);
    expect(isIgnored(star, 'docs/deep/a.md')).toBe(false);
    const globstar = parseDockerignore('**/*.log\n');
    expect(isIgnored(globstar, 'x.log')).toBe(true);
    expect(isIgnored(globstar, 'a/b/x.log')).toBe(true);
  });
});
