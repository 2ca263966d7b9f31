import { describe, expect, it } from '@jest/globals';
import { parseSession, requestEnvelopeOf } from '#src/formats/index.js';

const tool = { name: 'bash', description: 'run a command', parameters: { type: 'object' } };
const messages = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'Fix the test.' },
];

describe('the request envelope of a provider request file (S2)', () => {
  it('S2/O1: a Chat Completions request gives wire chat, its model, leading system text, tools and request fields', () => {
    const tools = [{ type: 'function', function: tool }];
    const text = JSON.stringify({ model: 'local-model', prompt_cache_key: 'k1', tools, messages });
    const session = parseSession(text).sessions[0];
    expect(requestEnvelopeOf(session)).toEqual({
      wire: 'chat',
      model: 'local-model',
      system: 'You are a coding agent.',
      tools: [tool],
      requestFields: expect.objectContaining({ model: 'local-model', prompt_cache_key: 'k1', tools }),
    });
  });

  it('S2: an Anthropic request gives wire messages and maps input_schema to parameters', () => {
    const text = JSON.stringify({
      model: 'claude-sonnet-4-6',
      system: 'You are a coding agent.',
      tools: [{ name: 'bash', description: 'run a command', input_schema: { type: 'object' } }],
      messages: [{ role: 'user', content: 'Fix the test.' }],
    });
    const envelope = requestEnvelopeOf(parseSession(text, { from: 'anthropic' }).sessions[0]);
    expect(envelope).toMatchObject({ wire: 'messages', model: 'claude-sonnet-4-6', tools: [tool] });
  });

  it('S2: a transcript or a request without a model has no envelope', () => {
    expect(requestEnvelopeOf(parseSession(JSON.stringify({ messages })).sessions[0])).toBeUndefined();
    expect(requestEnvelopeOf({ meta: {}, messages: [] })).toBeUndefined();
  });
});
