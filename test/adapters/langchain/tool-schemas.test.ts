import { afterAll, describe, expect, it } from '@jest/globals';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { createAgent, tool } from 'langchain';
import { z } from 'zod';
import { compactorMiddleware } from '#src/adapters/langchain/index.js';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';

afterAll(freeEncoders);
const estimator = createEstimator();

/** A search tool whose parameters are `fields` documented options. */
function searchTool(fields: number) {
  const shape: Record<string, z.ZodTypeAny> = { query: z.string() };
  for (let i = 0; i < fields; i++)
    shape[`filter_${i}`] = z
      .enum(['any', 'recent', 'archived'])
      .optional()
      .describe(`Restricts results by property ${i}: matching documents only, in the stated state.`);
  return tool(() => 'no results', {
    name: 'search',
    description: 'Search documents',
    schema: z.object(shape),
  });
}

/** The fixed prefix the conversation's session counts after one createAgent call with `fields`. */
async function prefixWith(fields: number): Promise<number> {
  const model = fakeModel().respond(new AIMessage('ok'));
  const middleware = compactorMiddleware({ limits: { capacity: 100_000 } });
  const agent = createAgent({ model, tools: [searchTool(fields)], middleware: [middleware] });
  await agent.invoke({ messages: [new HumanMessage('find it')] }, { configurable: { thread_id: 't' } });
  return middleware.conversations.session('t')!.limits.prefixTokens ?? 0;
}

describe('LangChain adapter: tool schemas in the fixed prefix', () => {
  it('B2/L1: a tool with a large parameters schema raises the prefix by about that schema', async () => {
    const small = await prefixWith(0);
    const large = await prefixWith(60);
    // What the 60 documented parameters add to the schema the provider receives.
    const added =
      estimator.text(JSON.stringify(z.toJSONSchema(searchTool(60).schema as z.ZodType))) -
      estimator.text(JSON.stringify(z.toJSONSchema(searchTool(0).schema as z.ZodType)));
    expect(added).toBeGreaterThan(1_000);
    expect(large - small).toBeGreaterThan(0.8 * added);
    expect(large - small).toBeLessThan(1.2 * added);
  });
});
