import type { LanguageModel, LanguageModelMiddleware, Tool } from 'ai';
import type { SummaryClient } from '../../providers/types.js';
import type { CompactorSessionOptions } from '../../session/index.js';
import {
  createConversations,
  parseAdapterOptions,
  type ConversationOptions,
  type ConversationProjection,
  type Conversations,
} from '../shared/conversations.js';
import { recordProviderUsage } from '../shared/usage.js';
import { fromAiMessages, toAiMessages } from './convert.js';
import { aiSdkSummarizer } from './summarizer.js';
import { aiSdkRecallTool } from './recall-tool.js';

type TransformArgs = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0];
type CallOptions = TransformArgs['params'];
type Prompt = CallOptions['prompt'];
type WrapStream = NonNullable<LanguageModelMiddleware['wrapStream']>;
type StreamPart = Awaited<ReturnType<WrapStream>>['stream'] extends ReadableStream<infer P> ? P : never;

/** The input part of an AI SDK usage report, recorded into the call's conversation. */
function recordUsage(call: ConversationProjection | undefined, usage: unknown): void {
  const input = (usage as { inputTokens?: { total?: unknown; cacheRead?: unknown } } | undefined)
    ?.inputTokens;
  if (call !== undefined) recordProviderUsage(call, input?.total, input?.cacheRead);
}

/** Options of {@link compactorMiddleware}: `createCompactorSession`'s, plus a summarizer model. */
export interface CompactorMiddlewareOptions
  extends Omit<CompactorSessionOptions, 'summarizer' | 'history'>, ConversationOptions {
  /** Who writes summaries: any AI SDK model (`{ model }`) or a summary client; default the offline summarizer. */
  summarizer?: { model: LanguageModel } | SummaryClient;
}

/** The middleware, with the per-conversation state it keeps. */
export type CompactorMiddleware = LanguageModelMiddleware & {
  /** Per-conversation sessions (history, budgets, cache health), by conversation id. */
  readonly conversations: Conversations;
  /**
   * The recall tool (absent with `recall: false`): add it to the call's tools as `recall`, so
   * the model can get back a cleared tool result by the id its stub names.
   */
  readonly recallTool?: Tool;
};

/** `providerOptions.compactor.conversationId` of a call, when the caller names its conversation. */
function conversationIdOf(params: CallOptions): string | undefined {
  const id = (params.providerOptions?.compactor as { conversationId?: unknown } | undefined)?.conversationId;
  return typeof id === 'string' ? id : undefined;
}

/** The call's tools as the provider receives them (name, description, input schema). */
function toolsOf(params: CallOptions) {
  return (params.tools ?? []).map((t) =>
    t.type === 'function'
      ? { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.inputSchema }
      : { name: t.name },
  );
}

/** Normalizes the summarizer option into a summary client (or none: the route's default). */
export function summaryClientOf(
  summarizer: CompactorMiddlewareOptions['summarizer'],
): SummaryClient | undefined {
  if (summarizer === undefined) return undefined;
  return 'summarize' in summarizer ? summarizer : aiSdkSummarizer(summarizer.model);
}

/**
 * A language-model middleware for `wrapLanguageModel` that sends the model a projected prompt:
 * pairing repaired, old tool results cleared, the conversation compacted when it nears the
 * window. The caller's messages are never changed; the system prompt and tools pass through.
 * Generate and stream calls are treated alike.
 *
 * A conversation is named by `providerOptions: { compactor: { conversationId } }` on the call,
 * else by its system prompt and first message; its state (compaction boundary, summary, cache health) lives in
 * memory, or under `sessionDir/<id>` when `sessionDir` is given.
 */
export function compactorMiddleware(options: CompactorMiddlewareOptions = {}): CompactorMiddleware {
  const { summarizer, ...rest } = options;
  parseAdapterOptions(rest, 'compactorMiddleware: options');
  const client = summaryClientOf(summarizer);
  const conversations = createConversations({ ...rest, ...(client ? { summarizer: client } : {}) });
  // The projection each transformed call was built from, to record its usage against.
  const sent = new WeakMap<object, ConversationProjection>();

  return {
    specificationVersion: 'v4',
    conversations,
    ...(rest.recall === false ? {} : { recallTool: aiSdkRecallTool(conversations) }),
    async transformParams({ params, model }) {
      const prompt = params.prompt;
      let lead = 0;
      while (lead < prompt.length && prompt[lead].role === 'system') lead++;
      const system = prompt
        .slice(0, lead)
        .map((m) => m.content as string)
        .join('\n\n');
      const projection = await conversations.project({
        conversationId: conversationIdOf(params),
        ...(lead > 0 ? { system } : {}),
        tools: toolsOf(params),
        messages: fromAiMessages(prompt.slice(lead) as never),
        model: { provider: model.provider, id: model.modelId },
      });
      const projected = [
        ...prompt.slice(0, lead),
        ...(toAiMessages(projection.request, true) as unknown as Prompt),
      ];
      const next = { ...params, prompt: projected };
      sent.set(next, projection);
      return next;
    },
    // The provider's usage feeds the conversation's cache health and pressure anchor.
    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      recordUsage(sent.get(params), result.usage);
      return result;
    },
    // A stream reports its usage in its finish part; the parts pass through unchanged.
    async wrapStream({ doStream, params }) {
      const result = await doStream();
      const call = sent.get(params);
      if (call === undefined) return result;
      const stream = result.stream.pipeThrough(
        new TransformStream<StreamPart, StreamPart>({
          transform(part, controller) {
            if (part.type === 'finish') recordUsage(call, part.usage);
            controller.enqueue(part);
          },
        }),
      );
      return { ...result, stream };
    },
  };
}
