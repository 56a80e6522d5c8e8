import { ProtocolError } from './errors.ts';
import { ownRecord } from './json.ts';

/**
 * SPEC "Workspace and host tools": what a run's working directory starts
 * from. Cloned and set up once per workspace (tenant and thread) by the
 * runner, before the harness starts.
 */
export interface WorkspaceRequest {
  source?: { type: 'git'; url: string; ref?: string };
  /**
   * Shell commands run in the container, in the workspace, in order. By
   * design: whoever holds the API token can already make a coding harness run
   * any command there, so setup adds no power (README "Security model").
   */
  setup?: string[];
  /** Environment variable names (never values); each must be listed in `WORKSPACE_SECRETS`. */
  secrets?: string[];
}

export interface WorkspacePolicy {
  /** `WORKSPACE_SECRETS`: the only names a request may ask for. */
  allowedSecrets: readonly string[];
  /**
   * Auth off (a developer's machine, the tests): `file://` and loopback
   * `http://` sources are allowed, for a local test repository. A deployed
   * instance accepts only `https://`, so a caller can make it neither read
   * its local files nor reach its internal network (SSRF).
   */
  allowLocalSources: boolean;
}

/** Thrown for a secret name the operator did not list: the API answers `secret_not_allowed`. */
export class SecretNotAllowedError extends ProtocolError {}

export const MAX_SETUP_COMMANDS = 32;
export const MAX_SETUP_COMMAND_CHARS = 4_096;
export const MAX_WORKSPACE_SECRETS = 32;
const MAX_URL_CHARS = 2_048;

/** An environment variable name: what `WORKSPACE_SECRETS` lists and `secrets` asks for. */
export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/**
 * Branch, tag or commit names git accepts (`git check-ref-format`'s rules, a
 * safe subset): no leading `-` (an option to `git clone`), no `..`, no
 * `@{`, no trailing `.lock` or `/`, no spaces or shell syntax.
 */
const REF_PATTERN = /^(?!-)(?!.*\.\.)(?!.*@\{)(?!.*\/\/)(?!.*\.lock$)(?!.*\/$)[A-Za-z0-9._/+-]{1,200}$/;

const WORKSPACE_FIELDS = ['source', 'setup', 'secrets'];
const SOURCE_FIELDS = ['type', 'url', 'ref'];
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function onlyFields(record: Record<string, unknown>, known: string[], path: string): void {
  for (const key of Object.keys(record)) {
    if (!known.includes(key)) throw new ProtocolError(`${path}.${key}`, `unknown field (known: ${known.join(', ')})`);
  }
}

function parseSourceUrl(value: unknown, policy: WorkspacePolicy): string {
  const path = 'workspace.source.url';
  if (typeof value !== 'string' || value.length > MAX_URL_CHARS) throw new ProtocolError(path, `expected a URL string of at most ${MAX_URL_CHARS} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ProtocolError(path, 'expected an absolute URL');
  }
  if (url.protocol === 'https:' && url.hostname !== '') return value;
  const local = url.protocol === 'file:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  if (local && policy.allowLocalSources) return value;
  throw new ProtocolError(path, local ? 'file:// and loopback http:// sources are allowed only with auth off (local development)' : 'expected an https:// URL');
}

function parseSource(value: unknown, policy: WorkspacePolicy): NonNullable<WorkspaceRequest['source']> {
  const source = ownRecord(value, 'workspace.source');
  onlyFields(source, SOURCE_FIELDS, 'workspace.source');
  if (source.type !== 'git') throw new ProtocolError('workspace.source.type', "expected 'git'");
  const out: NonNullable<WorkspaceRequest['source']> = { type: 'git', url: parseSourceUrl(source.url, policy) };
  if (source.ref !== undefined) {
    if (typeof source.ref !== 'string' || !REF_PATTERN.test(source.ref)) throw new ProtocolError('workspace.source.ref', 'expected a branch, tag or commit name (letters, digits, . _ / + -; no leading -, no ..)');
    out.ref = source.ref;
  }
  return out;
}

function parseSetup(value: unknown): string[] {
  if (!Array.isArray(value) || value.length > MAX_SETUP_COMMANDS) throw new ProtocolError('workspace.setup', `expected an array of at most ${MAX_SETUP_COMMANDS} commands`);
  return value.map((command, i) => {
    if (typeof command !== 'string' || command.trim() === '' || command.length > MAX_SETUP_COMMAND_CHARS) {
      throw new ProtocolError(`workspace.setup[${i}]`, `expected a non-empty command of at most ${MAX_SETUP_COMMAND_CHARS} characters`);
    }
    return command;
  });
}

function parseSecrets(value: unknown, policy: WorkspacePolicy): string[] {
  if (!Array.isArray(value) || value.length > MAX_WORKSPACE_SECRETS) throw new ProtocolError('workspace.secrets', `expected an array of at most ${MAX_WORKSPACE_SECRETS} names`);
  const names = value.map((name, i) => {
    if (typeof name !== 'string' || !SECRET_NAME_PATTERN.test(name)) throw new ProtocolError(`workspace.secrets[${i}]`, `expected an environment variable name matching ${SECRET_NAME_PATTERN}`);
    if (!policy.allowedSecrets.includes(name)) throw new SecretNotAllowedError(`workspace.secrets[${i}]`, `${name} is not listed in the relay's WORKSPACE_SECRETS`);
    return name;
  });
  return [...new Set(names)];
}

/** Parse, don't cast: own properties only, strict shapes; a bad value is a `ProtocolError` naming the field. */
export function parseWorkspace(value: unknown, policy: WorkspacePolicy): WorkspaceRequest {
  const workspace = ownRecord(value, 'workspace');
  onlyFields(workspace, WORKSPACE_FIELDS, 'workspace');
  const out: WorkspaceRequest = {};
  if (workspace.source !== undefined) out.source = parseSource(workspace.source, policy);
  if (workspace.setup !== undefined) out.setup = parseSetup(workspace.setup);
  if (workspace.secrets !== undefined) out.secrets = parseSecrets(workspace.secrets, policy);
  return out;
}

/**
 * The runner trusts the Worker's policy (it already checked the names and
 * the URL's scheme against its own configuration) and checks the shape again.
 */
export function parseTrustedWorkspace(value: unknown): WorkspaceRequest {
  const workspace = ownRecord(value, 'workspace');
  const secrets = workspace.secrets;
  const allowedSecrets = Array.isArray(secrets) ? secrets.filter((name): name is string => typeof name === 'string') : [];
  return parseWorkspace(value, { allowedSecrets, allowLocalSources: true });
}

/** `WORKSPACE_SECRETS`: comma-separated names; a bad name is a `ProtocolError` naming it. */
export function parseSecretNames(raw: string | undefined): string[] {
  const names = (raw ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
  for (const name of names) if (!SECRET_NAME_PATTERN.test(name)) throw new ProtocolError('WORKSPACE_SECRETS', `${JSON.stringify(name)} is not an environment variable name`);
  return names;
}
