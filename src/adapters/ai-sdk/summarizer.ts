import type { LanguageModel } from 'ai';
import type { SummaryClient } from '../../providers/types.js';
import { loadPeer } from '../shared/peer.js';
import { toModelMessages } from './convert.js';

/**
 * A summary client over any AI SDK `LanguageModel`: the caller's own provider, key and base URL
 * write the Local summary. Pass the model unwrapped (not the one carrying the compactor
 * middleware), so summary calls are not projected themselves.
 */
export function aiSdkSummarizer(model: LanguageModel): SummaryClient {
  const provider = typeof model === 'string' ? 'gateway' : model.provider;
  const id = typeof model === 'string' ? model : model.modelId;
  return {
    provider,
    model: id,
    async summarize(request, signal) {
      const { generateText } = await loadPeer(() => import('ai'), 'ai', 'ai-sdk');
      const result = await generateText({
        model,
        ...(request.system !== undefined ? { system: request.system } : {}),
        messages: [...toModelMessages(request.messages), { role: 'user', content: request.instructions }],
        ...(request.maxOutputTokens !== undefined ? { maxOutputTokens: request.maxOutputTokens } : {}),
        ...(signal !== undefined ? { abortSignal: signal } : {}),
      });
      const reason = result.finishReason;
      return {
        text: result.text,
        finishReason: reason === 'stop' ? 'stop' : reason === 'length' ? 'length' : 'other',
        usage: {
          ...(result.usage.inputTokens !== undefined ? { inputTokens: result.usage.inputTokens } : {}),
          ...(result.usage.outputTokens !== undefined ? { outputTokens: result.usage.outputTokens } : {}),
        },
      };
    },
  };
}
