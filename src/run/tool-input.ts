import { Validator, type Schema } from '@cfworker/json-schema';

/** How many of a validator's complaints a model is shown: enough to fix its call. */
const MAX_REPORTED_ERRORS = 5;

/**
 * Checks a tool call's input against the tool's JSON Schema before anything
 * runs it, with `@cfworker/json-schema` (made for Workers: no `eval`, no code
 * generation). Returns why the input does not fit, or `null` when it does.
 */
export function toolInputProblem(schema: Record<string, unknown>, input: unknown): string | null {
  let validator: Validator;
  try {
    // A JSON copy: the stored schema is a null-prototype object, and the validator walks it with `in` and `hasOwnProperty`.
    validator = new Validator(JSON.parse(JSON.stringify(schema)) as Schema, '2020-12', false);
  } catch (error) {
    return `the tool's inputSchema cannot be used (${error instanceof Error ? error.message : String(error)})`;
  }
  const result = validator.validate(JSON.parse(JSON.stringify(input ?? null)));
  if (result.valid) return null;
  // The deepest errors say what is wrong; the outer ones only that something below is.
  const leaves = result.errors.filter((error) => !result.errors.some((other) => other !== error && other.instanceLocation.startsWith(`${error.instanceLocation}/`)));
  return (leaves.length > 0 ? leaves : result.errors)
    .slice(0, MAX_REPORTED_ERRORS)
    .map((error) => `${error.instanceLocation || '#'}: ${error.error}`)
    .join('; ');
}
