import type { z } from 'zod';
import { CompactorOptionsError } from './errors.js';

/** Formats a zod path as `messages[3].content[0].text`, after `base` when given. */
export function formatPath(path: readonly PropertyKey[], base = ''): string {
  let out = base;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/**
 * The first problem zod found, as the field's path (below `base`) and zod's message: every
 * validation error the library and the CLI print is built from this one line, never from a
 * multi-line zod dump.
 */
export function firstIssue(
  error: z.ZodError,
  base = '',
): { field: string; key: PropertyKey | undefined; message: string } {
  const issue = error.issues[0];
  return { field: formatPath(issue.path, base), key: issue.path[0], message: issue.message };
}

/**
 * Parses library options with `schema`; on failure throws one {@link CompactorOptionsError}
 * naming `where` plus the path of the first bad field.
 */
export function parseOptions<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { field, message } = firstIssue(parsed.error, where);
  throw new CompactorOptionsError(field, message);
}
