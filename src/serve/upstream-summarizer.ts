import { AsyncLocalStorage } from 'node:async_hooks';
import { EmptySummaryError, InternalError, ProviderError } from '../core/errors.js';
import type { Json, Message } from '../messages/message.js';
import { toAnthropicConversation, toAnthropicTools } from '../providers/anthropic/convert.js';
import { toChatMessages, toChatTools } from '../providers/chat/dialect.js';
import { toResponsesInput } from '../providers/openai-responses/convert.js';
import type { SummaryClient, SummaryRequest, SummaryResponse } from '../providers/types.js';
import type { ProtocolName } from './protocols.js';
import type { Upstream } from './upstream.js';

/** The proxied request a summary is written for: its upstream, model and the client's credentials. */
export interface SummaryContext {
  protocol: ProtocolName;
  model: string;
  /** The upstream URL of the request's own path. */
  url: string;
  /** The client's headers as they go upstream (its credential among them; never stored). */
  headers: Record<string, string | string[]>;
  upstream: Upstream;
  signal: AbortSignal;
}

const current = new AsyncLocalStorage<SummaryContext>();

/** Runs `work` (a request's projection) so that summaries it needs go to that request's upstream. */
export function withSummaryContext<T>(context: SummaryContext, work: () => Promise<T>): Promise<T> {
  return current.run(context, work);
}

type Body = Record<string, Json>;

const DEFAULT_SUMMARY_TOKENS = 4_096;

/** The summary request in the wire shape of the client's own request. */
function summaryBody(c: SummaryContext, r: SummaryRequest): Body {
  const messages: Message[] = [...r.messages, { role: 'user', content: r.instructions }];
  const tools = r.tools ?? [];
  if (c.protocol === 'anthropic') {
    const conv = toAnthropicConversation(messages, r.system);
    return {
      model: c.model,
      max_tokens: r.maxOutputTokens ?? DEFAULT_SUMMARY_TOKENS,
      ...(conv.system !== undefined ? { system: conv.system } : {}),
      ...(tools.length > 0 ? { tools: toAnthropicTools(tools), tool_choice: { type: 'none' } } : {}),
      messages: conv.messages,
    };
  }
  if (c.protocol === 'openai-chat')
    return {
      model: c.model,
      ...(tools.length > 0 ? { tools: toChatTools(tools), tool_choice: 'none' } : {}),
      ...(r.maxOutputTokens !== undefined ? { max_completion_tokens: r.maxOutputTokens } : {}),
      messages: toChatMessages([
        ...(r.system ? [{ role: 'system' as const, content: r.system }] : []),
        ...messages,
      ]),
    };
  return {
    model: c.model,
    ...(r.system ? { instructions: r.system } : {}),
    ...(tools.length > 0
      ? {
          tools: tools.map((t) => ({
            type: 'function',
            name: t.name,
            ...(t.description !== undefined ? { description: t.description } : {}),
            parameters: (t.parameters ?? { type: 'object', properties: {} }) as Json,
            strict: false,
          })),
          tool_choice: 'none',
        }
      : {}),
    ...(r.maxOutputTokens !== undefined ? { max_output_tokens: r.maxOutputTokens } : {}),
    store: false,
    input: toResponsesInput(messages),
  };
}

const texts = (parts: unknown, type: string): string =>
  Array.isArray(parts)
    ? parts
        .filter((p) => p?.type === type && typeof p.text === 'string')
        .map((p) => p.text as string)
        .join('')
    : '';

/** The summary text and why generation stopped, from an answer of the protocol. */
function readSummary(protocol: ProtocolName, answer: any): SummaryResponse {
  if (protocol === 'anthropic') {
    const stop = answer?.stop_reason;
    return {
      text: texts(answer?.content, 'text'),
      finishReason:
        stop === 'max_tokens' ? 'length' : stop === 'end_turn' || stop === 'stop_sequence' ? 'stop' : 'other',
    };
  }
  if (protocol === 'openai-chat') {
    const choice = answer?.choices?.[0];
    const finish = choice?.finish_reason;
    return {
      text: typeof choice?.message?.content === 'string' ? choice.message.content : '',
      finishReason: finish === 'length' ? 'length' : finish === 'stop' ? 'stop' : 'other',
    };
  }
  const output: any[] = Array.isArray(answer?.output) ? answer.output : [];
  const cut = answer?.status === 'incomplete' && answer?.incomplete_details?.reason === 'max_output_tokens';
  return {
    text: output
      .filter((o) => o?.type === 'message')
      .map((o) => texts(o.content, 'output_text'))
      .join(''),
    finishReason: cut ? 'length' : 'stop',
  };
}

/**
 * Writes summaries with the model of the request being compacted, through its own upstream
 * and with its client's credentials (a Local summary: the proxy holds no key of its own).
 */
export function upstreamSummarizer(): SummaryClient {
  return {
    provider: 'upstream',
    model: 'the request model',
    async summarize(request, signal) {
      const c = current.getStore();
      if (c === undefined)
        throw new InternalError('compactor: a summary was asked for outside a proxied request');
      const site = { provider: `upstream (${c.protocol})`, model: c.model };
      const res = await c.upstream.send(
        c.url,
        {
          method: 'POST',
          headers: { ...c.headers, 'content-type': 'application/json' },
          body: JSON.stringify(summaryBody(c, request)),
        },
        signal ?? c.signal,
      );
      const text = await res.body.text();
      if (res.status !== 200)
        throw new ProviderError(`${site.provider}/${site.model}: the summary call answered ${res.status}`, {
          ...site,
          status: res.status,
          retryable: false,
        });
      let answer: unknown;
      try {
        answer = JSON.parse(text);
      } catch {
        throw new ProviderError(`${site.provider}/${site.model}: the summary answer is not JSON`, site);
      }
      const summary = readSummary(c.protocol, answer);
      if (summary.text.trim() === '') throw new EmptySummaryError(site);
      return summary;
    },
  };
}
