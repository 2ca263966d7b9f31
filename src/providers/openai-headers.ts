import { randomUUID } from 'node:crypto';
import type { ResolvedRoute } from './catalog.js';
import type { CallSite } from './classify-error.js';

/** Bearer auth for OpenAI-family routes (OpenAI, OpenResponses, Vercel, xAI, compatibles). */
export function bearerHeaders(route: ResolvedRoute): Record<string, string> {
  const key = route.apiKey();
  return { 'x-client-request-id': randomUUID(), ...(key ? { authorization: `Bearer ${key}` } : {}) };
}

/** The call site for errors: the user's provider name, the model, and the key to scrub. */
export function siteOf(route: ResolvedRoute): CallSite {
  return { provider: route.label, model: route.model, secrets: [route.apiKey()] };
}
