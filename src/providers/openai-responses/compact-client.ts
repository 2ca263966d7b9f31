import { z } from 'zod';
import type { Json } from '../../messages/message.js';
import type { ResolvedRoute } from '../catalog.js';
import { ProviderError } from '../../core/errors.js';
import { postJson, type HttpOptions } from '../http.js';
import { bearerHeaders, siteOf } from '../dialect.js';
import { parseResponse } from '../dialect.js';
import type { CallSite } from '../classify-error.js';
import { forwardedFields } from '../request-fields.js';
import { fromResponsesOutput, toResponsesInput } from './convert.js';
import type {
  NativeStandaloneClient,
  StandaloneCompactRequest,
  StandaloneCompactResult,
  Usage,
} from '../types.js';

/**
 * NativeStandalone: a synchronous JSON `POST {base}/responses/compact` on OpenAI,
 * OpenResponses, Vercel AI Gateway and xAI. The payload carries only the allowed fields;
 * the returned items become canonical messages that replay verbatim; no local bounding.
 */

const UsageSchema = z.looseObject({
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  input_tokens_details: z.looseObject({ cached_tokens: z.number().optional() }).nullish(),
});

const CompactResponseSchema = z.looseObject({
  output: z.array(z.looseObject({ type: z.string().optional() })),
  usage: UsageSchema.nullish(),
});

/** The exact body: `model`, `input`, and only the optional fields that are set (never `stream`). */
export function compactPayload(request: StandaloneCompactRequest): Record<string, Json> {
  const body: Record<string, Json> = { model: request.model, input: toResponsesInput(request.input) };
  if (request.instructions !== undefined && request.instructions.trim() !== '')
    body.instructions = request.instructions;
  if (request.serviceTier !== undefined) body.service_tier = request.serviceTier;
  if (request.promptCacheKey !== undefined) body.prompt_cache_key = request.promptCacheKey;
  if (request.promptCacheOptions !== undefined)
    body.prompt_cache_options = request.promptCacheOptions as Json;
  if (request.promptCacheRetention !== undefined) body.prompt_cache_retention = request.promptCacheRetention;
  // The caller's own cache/tier fields, where the explicit ones above left them unset.
  for (const [k, v] of Object.entries(forwardedFields(request.requestFields, 'compact')))
    if (!(k in body)) body[k] = v;
  return body;
}

/** Responses usage → canonical usage. */
export function responsesUsage(u: z.infer<typeof UsageSchema> | null | undefined): Usage | undefined {
  if (!u) return undefined;
  return {
    ...(u.input_tokens !== undefined ? { inputTokens: u.input_tokens } : {}),
    ...(u.output_tokens !== undefined ? { outputTokens: u.output_tokens } : {}),
    ...(u.input_tokens_details?.cached_tokens !== undefined
      ? { cachedInputTokens: u.input_tokens_details.cached_tokens }
      : {}),
  };
}

/** Creates the standalone client for a route (the caller checked the strategy with selectStrategy). */
export function createStandaloneClient(route: ResolvedRoute, opts: HttpOptions = {}): NativeStandaloneClient {
  const site = siteOf(route);
  return {
    provider: route.label,
    model: route.model,
    async compactStandalone(
      request: StandaloneCompactRequest,
      signal?: AbortSignal,
    ): Promise<StandaloneCompactResult> {
      const s = { ...site, model: request.model };
      const payload = compactPayload(request);
      // Nothing to compact: no call, history unchanged.
      if ((payload.input as Json[]).length === 0) return { items: [...request.input] };
      const json = await postJson(
        { url: `${route.baseUrl}/responses/compact`, headers: bearerHeaders(route), body: payload, site: s },
        opts,
        signal,
      );
      return readCompactAnswer(json, s);
    },
  };
}

/** Reads a `/responses/compact` answer: its items as canonical messages, and its usage. */
export function readCompactAnswer(json: unknown, s: CallSite): StandaloneCompactResult {
  const parsed = parseResponse(CompactResponseSchema, json, s, 'compaction');
  const items = fromResponsesOutput(parsed.output as Json[]);
  if (items.length === 0) {
    throw new ProviderError(`${s.provider}/${s.model}: compaction response contained no reusable items`, {
      provider: s.provider,
      model: s.model,
      code: 'empty_compaction',
      retryable: false,
    });
  }
  const usage = responsesUsage(parsed.usage);
  return usage ? { items, usage } : { items };
}
