import type { z } from 'zod';
import { CompactorOptionsError } from './errors.js';

/**
 * Parses library options with `schema`; on failure throws one {@link CompactorOptionsError}
 * naming `where` plus the path of the first bad field (never a multi-line zod dump).
 */
export function parseOptions<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue.path.map(String).join('.');
  throw new CompactorOptionsError(`${where}${field ? `.${field}` : ''}`, issue.message);
}
