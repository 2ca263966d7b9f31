import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { Json, Message } from '../messages/message.js';
import type { ResolvedRoute } from './catalog.js';
import type { CallSite } from './classify-error.js';
import { ProviderError } from '../core/errors.js';
import type { HttpOptions } from './http.js';
import type { SseEvent } from './sse.js';
import type { NativeInlineClient, NativeStandaloneClient, SummaryRequest, SummaryResponse } from './types.js';

/**
 * What one wire dialect (OpenAI Responses, Anthropic Messages, Chat Completions …) gives the
 * rest of the library, as one object: how to build a summary request's body and headers, how
 * to read the answer (whole or streamed), how canonical history becomes this wire's messages,
 * and, when the wire has one, its native compaction client. The catalog names a dialect per
 * provider (`wire`); the registry in dialects.ts maps that name to the object.
 */

/** A request body on the wire. */
export type WireBody = Record<string, Json>;

/** The native compaction a dialect offers, tagged with the strategy it serves. */
export type NativeCompaction =
  | {
      strategy: 'nativeStandalone';
      client(route: ResolvedRoute, opts?: HttpOptions): NativeStandaloneClient;
    }
  | { strategy: 'nativeInline'; client(route: ResolvedRoute, opts?: HttpOptions): NativeInlineClient };

/** One wire dialect; see the comment at the top of this file. */
export interface WireDialect {
  /** Path of the generate endpoint after the route's base URL (`/chat/completions`). */
  path: string;
  /** Request headers (auth and whatever the body calls for). */
  headers(route: ResolvedRoute, body: WireBody): Record<string, string>;
  /** The body of a one-shot summary request: tools listed but disabled, instructions last. */
  body(route: ResolvedRoute, request: SummaryRequest, stream: boolean): WireBody;
  /** Reads text, finish reason and usage from the endpoint's JSON answer. */
  read(json: unknown, site: CallSite): SummaryResponse;
  /** Folds this wire's event stream into the JSON the non-streaming endpoint returns. */
  fold(site: CallSite, events: AsyncIterable<SseEvent>): Promise<unknown>;
  /** Canonical history in this wire's message form. */
  convert(history: readonly Message[]): unknown;
  /** The wire's native compaction, when it has one. */
  native?: NativeCompaction;
}

/** A summary request's conversation: the fork, then the instructions as the last user turn. */
export function withInstructions(r: SummaryRequest): Message[] {
  return [...r.messages, { role: 'user' as const, content: r.instructions }];
}

/** Bearer auth for OpenAI-family routes (OpenAI, OpenResponses, Vercel, xAI, compatibles). */
export function bearerHeaders(route: ResolvedRoute): Record<string, string> {
  const key = route.apiKey();
  return { 'x-client-request-id': randomUUID(), ...(key ? { authorization: `Bearer ${key}` } : {}) };
}

/** The call site for errors: the user's provider name, the model, and the key to scrub. */
export function siteOf(route: ResolvedRoute): CallSite {
  return { provider: route.label, model: route.model, secrets: [route.apiKey()] };
}

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
