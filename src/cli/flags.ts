import { z } from 'zod';
import { UserError } from '../core/errors.js';
import { firstIssue } from '../core/parse-options.js';
import { flagValue } from '../core/settings.js';

/** zod helpers for CLI flag values (parseArgs gives strings; these coerce and bound them). */
export const flag = flagValue;

/**
 * Validates parsed flag values against a zod object schema. On failure, or when a switch and
 * its `--no-` form are both given, throws a one-line {@link UserError} naming the command, the
 * flag and what is wrong.
 */
export function parseFlags<S extends z.ZodType>(command: string, schema: S, values: unknown): z.infer<S> {
  rejectContradictions(command, values);
  const r = schema.safeParse(values);
  if (r.success) return r.data;
  const { key, message } = firstIssue(r.error);
  const got =
    key !== undefined && values && typeof values === 'object'
      ? (values as Record<string, unknown>)[String(key)]
      : undefined;
  throw new UserError(
    `${command}: ${key !== undefined ? `--${String(key)}` : 'flags'}: ${message}${got !== undefined ? ` (got ${JSON.stringify(got)})` : ''}`,
  );
}

/** A switch given together with its `--no-` form asks for both; neither is guessed. */
function rejectContradictions(command: string, values: unknown): void {
  if (!values || typeof values !== 'object') return;
  const given = values as Record<string, unknown>;
  for (const [name, on] of Object.entries(given))
    if (on === true && name.startsWith('no-') && given[name.slice(3)] === true)
      throw new UserError(`${command}: --${name.slice(3)} and --${name} contradict each other; give one`);
}
