/**
 * Compactor in a Vercel AI SDK tool loop (offline: the AI SDK's own test model, no API key).
 *
 *   npm run build && npx tsx examples/ai-sdk.ts
 *
 * The agent replays a real session's tool calls (examples/sessions/django__django-16560.traj.json)
 * with a window of 8,000 tokens. `compactorMiddleware` sits between `generateText` and the
 * model: every step the model receives a projected prompt (old tool results cleared, the
 * conversation summarized when it nears the window) while your `messages` stay untouched.
 * Swap `MockLanguageModelV4` for your provider's model (e.g. `openai('gpt-5.4')`), and pass
 * `summarizer: { model }` to have your own model write the summaries.
 */
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createEstimator } from 'context-compactor';
import { compactorMiddleware, fromModelMessages } from 'context-compactor/ai-sdk';
import { loadRealSession } from './real-session.js';

const WINDOW = 8_000;
const STEPS = 32;

// The real session: its task and the tool calls the agent made, with their outputs.
const { goal, steps } = loadRealSession(STEPS);

const usage = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};
const estimator = createEstimator();
let step = 0;
let largest = 0;
const model = new MockLanguageModelV4({
  modelId: 'replay-of-a-real-agent',
  doGenerate: async ({ prompt }) => {
    const n = step++;
    // What the model received: the projected prompt, not the whole conversation.
    const tokens = estimator.history(fromModelMessages(prompt as never));
    largest = Math.max(largest, tokens);
    console.log(`step ${String(n).padStart(2)}: the model got ${prompt.length} messages, ${tokens} tokens`);
    if (n >= STEPS)
      return {
        content: [{ type: 'text', text: 'Done.' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      };
    const { thought, call } = steps[n];
    return {
      content: [
        { type: 'text', text: thought.slice(0, 400) },
        { type: 'tool-call', toolCallId: call.id, toolName: 'bash', input: call.arguments },
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    };
  },
});

const middleware = compactorMiddleware({ limits: { capacity: WINDOW } }); // offline summarizer by default
const result = await generateText({
  model: wrapLanguageModel({ model, middleware }),
  messages: [{ role: 'user', content: goal }],
  tools: {
    bash: tool({
      description: 'Run a bash command',
      inputSchema: jsonSchema<{ command: string }>({
        type: 'object',
        properties: { command: { type: 'string' } },
      }),
      execute: async (_input, { toolCallId }) => steps.find((s) => s.call.id === toolCallId)?.output ?? '',
    }),
  },
  stopWhen: stepCountIs(STEPS + 1),
  providerOptions: { compactor: { conversationId: 'django-16560' } }, // names the conversation
});

const kept = middleware.conversations.session('django-16560')!;
const full = fromModelMessages([
  { role: 'user', content: goal },
  ...result.steps.flatMap((s) => s.response.messages),
]);
console.log(`${result.steps.length} steps: the conversation grew to ${estimator.history(full)} tokens;`);
console.log(
  `the largest prompt the model got was ${largest} tokens (window ${WINDOW}) over ${step} model calls;`,
);
console.log(
  `Compactor keeps ${kept.history.length} messages (summary + recent steps) for this conversation.`,
);
