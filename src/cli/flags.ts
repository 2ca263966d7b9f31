import { z } from 'zod';
import { UserError } from '../core/errors.js';

/** zod helpers for CLI flag values (parseArgs gives strings; these coerce and bound them). */
export const flag = {
  nonNegInt: z
    .string()
    .regex(/^\d+$/, 'expected a whole number, 0 or more')
    .transform((s) => Number(s))
    .refine((n) => Number.isSafeInteger(n), 'number too large'),
  posInt: z
    .string()
    .regex(/^\d+$/, 'expected a positive whole number')
    .transform((s) => Number(s))
    .refine((n) => Number.isSafeInteger(n) && n > 0, 'expected a positive whole number'),
  ratio: z
    .string()
    .regex(/^(0(\.\d+)?|1(\.0+)?)$/, 'expected a number between 0 and 1')
    .transform((s) => Number(s)),
};

/**
 * Validates parsed flag values against a zod object schema. On failure, or when a switch and
 * its `--no-` form are both given, throws a one-line {@link UserError} naming the command, the
 * flag and what is wrong.
 */
export function parseFlags<S extends z.ZodType>(command: string, schema: S, values: unknown): z.infer<S> {
  rejectContradictions(command, values);
  const r = schema.safeParse(values);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const key = issue.path.length > 0 ? `--${String(issue.path[0])}` : 'flags';
  const got =
    issue.path.length > 0 && values && typeof values === 'object'
      ? (values as Record<string, unknown>)[String(issue.path[0])]
      : undefined;
  throw new UserError(
    `${command}: ${key}: ${issue.message}${got !== undefined ? ` (got ${JSON.stringify(got)})` : ''}`,
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
