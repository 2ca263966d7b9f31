import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { SummaryClient } from '../../providers/types.js';
import { toBaseMessages } from './convert.js';
import { messages as lc } from './peers.js';

/** A summary client over any LangChain chat model: the caller's own provider writes the Local summary. */
export function langchainSummarizer(model: BaseChatModel): SummaryClient {
  const id = (model as { model?: unknown }).model;
  return {
    provider: model._llmType(),
    model: typeof id === 'string' ? id : model._llmType(),
    async summarize(request, signal) {
      const reply = await model.invoke(
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
