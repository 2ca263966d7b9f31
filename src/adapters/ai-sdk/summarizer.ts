import type { LanguageModel, ToolSet } from 'ai';
import type { SummaryClient, ToolSchema } from '../../providers/types.js';
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
      const ai = await loadPeer(() => import('ai'), 'ai', 'ai-sdk');
      const tools = request.tools !== undefined ? listedTools(ai, request.tools) : undefined;
      const result = await ai.generateText({
        model,
        ...(request.system !== undefined ? { system: request.system } : {}),
        // Listed, never called: some APIs (Anthropic's) refuse tool calls in a request without their tools.
        ...(tools !== undefined ? { tools, toolChoice: 'none' as const } : {}),
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

/** The agent's function tools as an AI SDK tool set with no `execute` (a summary calls none). */
function listedTools(ai: typeof import('ai'), schemas: ToolSchema[]): ToolSet | undefined {
  const functions = schemas.filter((t) => t.native === undefined);
  if (functions.length === 0) return undefined;
  const set: ToolSet = {};
  for (const t of functions)
    set[t.name] = ai.tool({
      ...(t.description !== undefined ? { description: t.description } : {}),
      inputSchema: ai.jsonSchema((t.parameters ?? { type: 'object', properties: {} }) as never),
    });
  return set;
}
