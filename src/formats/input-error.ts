import type { z } from 'zod';
import { UserError } from '../core/errors.js';
import { firstIssue } from '../core/parse-options.js';

/**
 * Builds the one-line error for bad input: `<where>: <what>`, where `where` names the
 * file (when known) and the line or entry. Never carries a stack to the user.
 */
export function inputError(where: string, what: string): UserError {
  return new UserError(`${where}: ${what}`);
}

/**
 * Validates `value` with `schema`; on failure throws a one-line {@link UserError} naming the
 * place (`where`), the field path below `base` and what zod found wrong.
 */
export function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: string,
  base = '',
): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const { field, message } = firstIssue(r.error, base);
  throw inputError(where, `${field || '(top level)'}: ${message}`);
}

/** Names a place in an input: `file.json` or `<input>`, plus an optional detail such as `line 4`. */
export function placeOf(fileName: string | undefined, detail?: string): string {
  const file = fileName ?? '<input>';
  return detail ? `${file}: ${detail}` : file;
}
