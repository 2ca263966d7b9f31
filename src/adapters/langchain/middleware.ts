import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { SummaryClient } from '../../providers/types.js';
import type { CompactorSessionOptions } from '../../session/index.js';
import {
  createConversations,
  parseAdapterOptions,
  type ConversationOptions,
  type Conversations,
} from '../shared/conversations.js';
import { fromBaseMessages, toBaseMessages } from './convert.js';
import { recordProviderUsage } from '../shared/usage.js';
import { agents, functionCalling } from './peers.js';
import { langchainSummarizer } from './summarizer.js';
import { langchainRecallTool } from './recall-tool.js';

/** Options of {@link compactorMiddleware}: `createCompactorSession`'s, plus a summarizer model. */
export interface CompactorMiddlewareOptions
  extends Omit<CompactorSessionOptions, 'summarizer' | 'history'>, ConversationOptions {
  /** Who writes summaries: any LangChain chat model (`{ model }`) or a summary client; default the offline summarizer. */
  summarizer?: { model: BaseChatModel } | SummaryClient;
}

/** The model's id and provider as LangChain chat models expose them (for the catalog window). */
function modelOf(model: unknown): { provider?: string; id: string } | undefined {
  const m = model as { model?: unknown; modelName?: unknown; _llmType?: () => string };
  const id =
    typeof m.model === 'string' ? m.model : typeof m.modelName === 'string' ? m.modelName : undefined;
  if (id === undefined) return undefined;
  return { id, ...(typeof m._llmType === 'function' ? { provider: m._llmType() } : {}) };
}

/**
 * A tool as the provider receives it — name, description and the parameters' JSON schema — so
 * the fixed prefix counts what the model is really sent. A tool LangChain cannot convert keeps
 * what it says of itself.
 */
function toolSchemaOf(t: unknown) {
  const tool = t as { name?: unknown; description?: unknown };
  const name = typeof tool.name === 'string' ? tool.name : 'tool';
  try {
    const fn = (
      functionCalling.convertToOpenAITool(t as never) as unknown as { function?: Record<string, unknown> }
    ).function;
    if (fn !== undefined)
      return {
        name: typeof fn.name === 'string' ? fn.name : name,
        ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
        ...(fn.parameters !== undefined ? { parameters: fn.parameters } : {}),
      };
  } catch {
    // Not a function tool (a provider's built-in tool): its name and description below.
  }
  return { name, ...(typeof tool.description === 'string' ? { description: tool.description } : {}) };
}

/** The input counts of a model response's `usage_metadata`, when the provider reported any. */
function usageOf(response: unknown): { input?: unknown; cached?: unknown } {
  const usage = (
    response as
      | { usage_metadata?: { input_tokens?: unknown; input_token_details?: { cache_read?: unknown } } }
      | undefined
  )?.usage_metadata;
  return { input: usage?.input_tokens, cached: usage?.input_token_details?.cache_read };
}

/**
 * A `createAgent` middleware that projects the messages the model sees (pairing repaired, old
 * tool results cleared, the conversation compacted near the window) while the agent's state keeps
 * the full history. A conversation is the run's `thread_id`, else its system prompt and first message; with
 * `sessionDir` its state is stored under `sessionDir/<id>`.
 */
export function compactorMiddleware(options: CompactorMiddlewareOptions = {}) {
  const { summarizer, ...rest } = options;
  parseAdapterOptions(rest, 'compactorMiddleware: options');
  const client =
    summarizer === undefined
      ? undefined
      : 'summarize' in summarizer
        ? summarizer
        : langchainSummarizer(summarizer.model);
  const conversations: Conversations = createConversations({
    ...rest,
    ...(client ? { summarizer: client } : {}),
  });
  const middleware = agents.createMiddleware({
    name: 'CompactorMiddleware',
    // The recall tool joins the agent's tools from its first call on.
    ...(rest.recall === false ? {} : { tools: [langchainRecallTool(conversations)] }),
    wrapModelCall: async (request, handler) => {
      const system = request.systemMessage?.text ?? request.systemPrompt ?? '';
      const tools = (request.tools ?? []).map(toolSchemaOf);
      const threadId = (request.runtime as { configurable?: { thread_id?: unknown } } | undefined)
        ?.configurable?.thread_id;
      const model = modelOf(request.model);
      const projection = await conversations.project({
        ...(typeof threadId === 'string' ? { conversationId: threadId } : {}),
        ...(system !== '' ? { system } : {}),
        tools,
        messages: fromBaseMessages(request.messages),
        ...(model ? { model } : {}),
      });
      const response = await handler({ ...request, messages: toBaseMessages(projection.request) });
      // The provider's usage feeds the conversation's cache health and pressure anchor.
      const { input, cached } = usageOf(response);
      recordProviderUsage(projection, input, cached);
      return response;
    },
  });
  return Object.assign(middleware, { conversations });
}
