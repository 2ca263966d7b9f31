import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { SummaryClient, ToolSchema } from '../../providers/types.js';
import { toBaseMessages } from './convert.js';
import { messages as lc } from './peers.js';

/** A summary client over any LangChain chat model: the caller's own provider writes the Local summary. */
export function langchainSummarizer(model: BaseChatModel): SummaryClient {
  const id = (model as { model?: unknown }).model;
  return {
    provider: model._llmType(),
    model: typeof id === 'string' ? id : model._llmType(),
    async summarize(request, signal) {
      const reply = await withListedTools(model, request.tools).invoke(
        [
          ...(request.system !== undefined ? [new lc.SystemMessage(request.system)] : []),
          ...toBaseMessages(request.messages),
          new lc.HumanMessage(request.instructions),
        ],
        signal !== undefined ? { signal } : {},
      );
      const meta = reply.response_metadata as { finish_reason?: unknown; stop_reason?: unknown } | undefined;
      const stop = meta?.finish_reason ?? meta?.stop_reason;
      return {
        text: reply.text,
        finishReason: stop === 'length' || stop === 'max_tokens' ? 'length' : 'stop',
      };
    },
  };
}

/**
 * The model with the agent's function tools bound and tool use turned off: some APIs
 * (Anthropic's) refuse tool calls in a request that does not define their tools, and a
 * summary calls none. A model that cannot bind tools is used as it is.
 */
function withListedTools(model: BaseChatModel, tools: ToolSchema[] | undefined) {
  const functions = (tools ?? []).filter((t) => t.native === undefined);
  if (functions.length === 0 || typeof model.bindTools !== 'function') return model;
  return model.bindTools(
    functions.map((t) => ({
      type: 'function' as const,
      function: {
        name: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        parameters: (t.parameters ?? { type: 'object', properties: {} }) as Record<string, unknown>,
      },
    })),
    { tool_choice: 'none' },
  );
}
