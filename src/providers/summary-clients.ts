import { z } from 'zod';
import type { Json } from '../messages/message.js';
import { aggregateAnthropicUsage, anthropicHeaders } from './anthropic-headers.js';
import { toAnthropicConversation, toAnthropicTools } from './anthropic-convert.js';
import type { ResolvedRoute } from './catalog.js';
import { toChatMessages, toChatTools } from './chat-convert.js';
import type { CallSite } from './classify-error.js';
import { EmptySummaryError } from '../core/errors.js';
import { postJson, postSse, type HttpOptions, type PostSpec } from './http.js';
import { bearerHeaders, siteOf } from './openai-headers.js';
import { parseResponse } from './parse-response.js';
import { forwardedFields } from './request-fields.js';
import { textOfResponsesItem, toResponsesInput } from './responses-convert.js';
import { responsesUsage } from './standalone-client.js';
import { foldChatStream, foldMessagesStream, foldResponsesStream } from './stream-accumulators.js';
import type { SseEvent } from './sse.js';
import type { SummaryClient, SummaryRequest, SummaryResponse, Usage } from './types.js';

/**
 * Local summary clients over Chat Completions, Anthropic Messages and
 * Responses. The tool catalog is listed with tool use disabled; the instructions go last
 * as a user message; streaming-only routes are folded into one response; an empty summary
 * is an {@link EmptySummaryError}; a cut-off summary reports `finishReason: 'length'`.
 */

type Body = Record<string, Json>;

/** One wire dialect: build the body, then read text/finish/usage from the response JSON. */
interface Dialect {
  path: string;
  headers(route: ResolvedRoute, body: Body): Record<string, string>;
  body(route: ResolvedRoute, request: SummaryRequest, stream: boolean): Body;
  read(json: unknown, site: CallSite): SummaryResponse;
  fold(site: CallSite, events: AsyncIterable<SseEvent>): Promise<unknown>;
}

const withInstructions = (r: SummaryRequest) => [
  ...r.messages,
  { role: 'user' as const, content: r.instructions },
];

const ChatResponseSchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({ content: z.union([z.string(), z.null()]).optional() }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z
    .looseObject({
      prompt_tokens: z.number().optional(),
      completion_tokens: z.number().optional(),
      prompt_tokens_details: z.looseObject({ cached_tokens: z.number().optional() }).nullish(),
    })
    .nullish(),
});

const chat: Dialect = {
  path: '/chat/completions',
  headers: (route) => bearerHeaders(route),
  body(route, r, stream) {
    const body: Body = {
      model: r.model,
      messages: toChatMessages([
        ...(r.system ? [{ role: 'system' as const, content: r.system }] : []),
        ...withInstructions(r),
      ]),
    };
    if (r.tools && r.tools.length > 0) {
      body.tools = toChatTools(r.tools);
      body.tool_choice = 'none';
    }
    if (r.maxOutputTokens !== undefined)
      body[route.kind === 'openai' ? 'max_completion_tokens' : 'max_tokens'] = r.maxOutputTokens;
    Object.assign(body, forwardedFields(r.requestFields, 'chat'));
    if (stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return body;
  },
  read(json, site) {
    const p = parseResponse(ChatResponseSchema, json, site, 'chat completion');
    const c = p.choices[0];
    const usage: Usage | undefined = p.usage
      ? {
          ...(p.usage.prompt_tokens !== undefined ? { inputTokens: p.usage.prompt_tokens } : {}),
          ...(p.usage.completion_tokens !== undefined ? { outputTokens: p.usage.completion_tokens } : {}),
          ...(p.usage.prompt_tokens_details?.cached_tokens !== undefined
            ? { cachedInputTokens: p.usage.prompt_tokens_details.cached_tokens }
            : {}),
        }
      : undefined;
    const fr = c.finish_reason;
    return {
      text: c.message.content ?? '',
      finishReason: fr === 'length' ? 'length' : fr === 'stop' ? 'stop' : 'other',
      ...(usage ? { usage } : {}),
    };
  },
  fold: foldChatStream,
};

const MessagesResponseSchema = z.looseObject({
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  stop_reason: z.string().nullish(),
  usage: z.unknown().optional(),
});

const messages: Dialect = {
  path: '/messages',
  headers: (route, body) => anthropicHeaders(route, body),
  body(route, r, stream) {
    const conv = toAnthropicConversation(withInstructions(r), r.system);
    const body: Body = {
      model: r.model,
      max_tokens: r.maxOutputTokens ?? Math.min(route.maxOutputTokens ?? 8_192, 8_192),
      messages: conv.messages,
    };
    if (conv.system !== undefined) body.system = conv.system;
    if (r.tools && r.tools.length > 0) {
      body.tools = toAnthropicTools(r.tools);
      body.tool_choice = { type: 'none' };
    }
    Object.assign(body, forwardedFields(r.requestFields, 'messages'));
    if (stream) body.stream = true;
    return body;
  },
  read(json, site) {
    const p = parseResponse(MessagesResponseSchema, json, site, 'messages');
    const text = p.content.map((b) => (b.type === 'text' ? (b.text ?? '') : '')).join('');
    const sr = p.stop_reason;
    const finishReason =
      sr === 'max_tokens' || sr === 'model_context_window_exceeded'
        ? 'length'
        : sr === 'end_turn' || sr === 'stop_sequence'
          ? 'stop'
          : 'other';
    const usage = aggregateAnthropicUsage(p.usage);
    return { text, finishReason, ...(usage ? { usage } : {}) };
  },
  fold: foldMessagesStream,
};

const ResponsesResponseSchema = z.looseObject({
  output: z.array(z.looseObject({ type: z.string().optional() })),
  status: z.string().nullish(),
  incomplete_details: z.looseObject({ reason: z.string().optional() }).nullish(),
  usage: z
    .looseObject({
      input_tokens: z.number().optional(),
      output_tokens: z.number().optional(),
      input_tokens_details: z.looseObject({ cached_tokens: z.number().optional() }).nullish(),
    })
    .nullish(),
});

const responses: Dialect = {
  path: '/responses',
  headers: (route) => bearerHeaders(route),
  body(_route, r, stream) {
    const body: Body = { model: r.model, input: toResponsesInput(withInstructions(r)), store: false };
    if (r.system) body.instructions = r.system;
    if (r.tools && r.tools.length > 0) {
      body.tools = r.tools.map((t) => ({
        type: 'function',
        name: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        parameters: (t.parameters ?? { type: 'object', properties: {} }) as Json,
        strict: false,
      }));
      body.tool_choice = 'none';
    }
    if (r.maxOutputTokens !== undefined) body.max_output_tokens = r.maxOutputTokens;
    Object.assign(body, forwardedFields(r.requestFields, 'responses'));
    if (stream) body.stream = true;
    return body;
  },
  read(json, site) {
    const p = parseResponse(ResponsesResponseSchema, json, site, 'responses');
    const text = p.output
      .filter((i) => i.type === 'message' && i.role === 'assistant')
      .map((i) => textOfResponsesItem(i as { [k: string]: Json }))
      .join('');
    const finishReason =
      p.status === 'incomplete' && p.incomplete_details?.reason === 'max_output_tokens'
        ? 'length'
        : p.status === 'completed' || p.status == null
          ? 'stop'
          : 'other';
    const usage = responsesUsage(p.usage);
    return { text, finishReason, ...(usage ? { usage } : {}) };
  },
  fold: foldResponsesStream,
};

const DIALECTS = { chat, messages, responses } as const;

/** Creates the Local summary client for a route, speaking the route's wire protocol. */
export function createSummaryClient(route: ResolvedRoute, opts: HttpOptions = {}): SummaryClient {
  const dialect = DIALECTS[route.wire];
  const base = siteOf(route);
  return {
    provider: route.label,
    model: route.model,
    async summarize(request: SummaryRequest, signal?: AbortSignal): Promise<SummaryResponse> {
      const site = { ...base, model: request.model };
      const body = dialect.body(route, request, route.streamingOnly);
      const spec: PostSpec = {
        url: `${route.baseUrl}${dialect.path}`,
        headers: dialect.headers(route, body),
        body,
        site,
      };
      const json = route.streamingOnly
        ? await postSse(spec, (ev) => dialect.fold(site, ev), opts, signal)
        : await postJson(spec, opts, signal);
      const res = dialect.read(json, site);
      if (res.text.trim() === '')
        throw new EmptySummaryError({
          provider: site.provider,
          model: site.model,
          ...(res.usage?.inputTokens !== undefined ? { inputTokens: res.usage.inputTokens } : {}),
        });
      return res;
    },
  };
}
