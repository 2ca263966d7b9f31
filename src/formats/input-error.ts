import type { z } from 'zod';
import { UserError } from '../core/errors.js';

/**
 * Builds the one-line error for bad input: `<where>: <what>`, where `where` names the
 * file (when known) and the line or entry. Never carries a stack to the user.
 */
export function inputError(where: string, what: string): UserError {
  return new UserError(`${where}: ${what}`);
}

/** Formats a zod path as `messages[3].content[0].text`. */
export function formatPath(path: readonly PropertyKey[], base = ''): string {
  let out = base;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
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
  const issue = r.error.issues[0];
  const field = formatPath(issue.path, base) || '(top level)';
  throw inputError(where, `${field}: ${issue.message}`);
}

/** Names a place in an input: `file.json` or `<input>`, plus an optional detail such as `line 4`. */
export function placeOf(fileName: string | undefined, detail?: string): string {
  const file = fileName ?? '<input>';
  return detail ? `${file}: ${detail}` : file;
}
