import type { Model } from '@openai/agents';
import type { SummaryClient } from '../../providers/types.js';
import { toAgentInputItems } from './convert.js';

type Output = {
  type?: string;
  role?: string;
  status?: string;
  content?: Array<{ type?: string; text?: unknown }>;
};

/**
 * A summary client over any Agents SDK `Model` (e.g. `new OpenAIResponsesModel(client, 'gpt-5.4')`):
 * the caller's own provider, key and base URL write the Local summary. The request carries no
 * tools, so the model can only answer with text.
 */
export function agentsSummarizer(model: Model, modelName = 'agents-model'): SummaryClient {
  return {
    provider: 'openai-agents',
    model: modelName,
    async summarize(request, signal) {
      const response = await model.getResponse({
        ...(request.system !== undefined ? { systemInstructions: request.system } : {}),
        input: [...toAgentInputItems(request.messages), { role: 'user', content: request.instructions }],
        modelSettings: {
          ...(request.maxOutputTokens !== undefined ? { maxTokens: request.maxOutputTokens } : {}),
        },
        tools: [],
        outputType: 'text',
        handoffs: [],
        tracing: false,
        ...(signal !== undefined ? { signal } : {}),
      });
      const messages = (response.output as Output[]).filter((o) => o.role === 'assistant');
      const text = messages
        .flatMap((o) => o.content ?? [])
        .map((p) => (p.type === 'output_text' && typeof p.text === 'string' ? p.text : ''))
        .join('');
      const cut = messages.some((o) => o.status === 'incomplete');
      const usage = response.usage;
      return {
        text,
        finishReason: cut ? 'length' : 'stop',
        usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens },
      };
    },
  };
}
