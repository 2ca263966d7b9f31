import type { z } from 'zod';
import type { CallSite } from './classify-error.js';
import { ProviderError } from '../core/errors.js';

/**
 * Validates a provider response with zod (every external input is validated). A shape
 * mismatch is a non-retryable ProviderError that names the offending field.
 */
export function parseResponse<S extends z.ZodType>(
  schema: S,
  json: unknown,
  site: CallSite,
  what: string,
): z.infer<S> {
  const r = schema.safeParse(json);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue?.path.length ? issue.path.join('.') : '(root)';
  throw new ProviderError(
    `${site.provider}/${site.model}: malformed ${what} response: field ${field}: ${issue?.message ?? 'invalid'}`,
    { provider: site.provider, model: site.model, code: 'malformed_response', retryable: false },
  );
}
