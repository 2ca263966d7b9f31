import { MockLanguageModelV4 } from 'ai/test';
import { fromAiMessages } from '#src/adapters/ai-sdk/convert.js';
import type { Estimator } from '#src/estimate/index.js';
import { createOfflineSummarizer } from '#src/summary/index.js';

export type MockCallOptions = Parameters<MockLanguageModelV4['doGenerate']>[0];

/** Usage a test model reports for every call. */
export const MOCK_USAGE = {
  inputTokens: { total: 1_000, noCache: 1_000, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 50, text: 50, reasoning: 0 },
};

/**
 * An AI SDK test model that writes summaries: a deterministic summary of its prompt (the
 * offline summarizer's), led by `mark` so a test can find it in later prompts. `check` sees
 * every call first and may refuse it by throwing, as a real provider would.
 */
export function summaryTestModel(opts: {
  provider: string;
  modelId: string;
  mark: string;
  estimator: Estimator;
  check?: (options: MockCallOptions) => void;
}): MockLanguageModelV4 {
  const offline = createOfflineSummarizer({ estimator: opts.estimator });
  return new MockLanguageModelV4({
    provider: opts.provider,
    modelId: opts.modelId,
    doGenerate: async (options) => {
      opts.check?.(options);
      const messages = fromAiMessages(options.prompt.filter((m) => m.role !== 'system') as never);
      const instructions = messages.pop();
      const { text } = await offline.summarize({
        model: opts.modelId,
        messages,
        instructions: typeof instructions?.content === 'string' ? instructions.content : '',
      });
      return {
        content: [{ type: 'text', text: `${opts.mark}\n${text}` }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: MOCK_USAGE,
        warnings: [],
      };
    },
  });
}
