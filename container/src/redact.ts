/**
 * Keeps credentials out of everything the runner writes: chunks, logs and
 * error bodies. Secrets reach a harness only through the environment, so the
 * environment is also the list of values to scrub.
 */
export type Redactor = (text: string) => string;

/** Names that hold credentials: ANTHROPIC_API_KEY, OPENAI_API_KEY, CODEX_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, API_TOKEN, … */
const SECRET_NAME = /(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$/i;

/** Shorter values are too likely to occur in ordinary text to be scrubbed safely. */
const MIN_SECRET_LENGTH = 8;

export const REDACTED = '[redacted]';

/** `secretNames`: scrubbed whatever they are called (a run's workspace secrets: `GITHUB_PAT` fits no pattern). */
export function secretValues(env: Record<string, string | undefined>, secretNames: readonly string[] = []): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !(SECRET_NAME.test(name) || secretNames.includes(name))) continue;
    const trimmed = value.trim();
    if (trimmed.length < MIN_SECRET_LENGTH) continue;
    values.add(trimmed);
    // How the value looks inside a JSON string, in case it has characters JSON escapes.
    values.add(JSON.stringify(trimmed).slice(1, -1));
  }
  // Longest first, so a secret that contains another is scrubbed whole.
  return [...values].sort((a, b) => b.length - a.length);
}

export function createRedactor(env: Record<string, string | undefined>, secretNames: readonly string[] = []): Redactor {
  const secrets = secretValues(env, secretNames);
  if (secrets.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const secret of secrets) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
    return out;
  };
}
