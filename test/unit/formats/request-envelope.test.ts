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

  it('S2/N1: a Responses request with provider tools keeps every tool: functions as schemas, the rest whole', () => {
    const webSearch = { type: 'web_search', search_context_size: 'low' };
    const patch = {
      type: 'custom',
      name: 'apply_patch',
      format: { type: 'grammar', definition: 'start: x' },
    };
    const tools = [{ type: 'function', ...tool }, webSearch, patch];
    const text = JSON.stringify({
      model: 'gpt-5',
      tools,
      input: [{ role: 'user', content: 'Fix the test.' }],
    });
    const envelope = requestEnvelopeOf(parseSession(text, { from: 'openai-responses' }).sessions[0]);
    expect(envelope?.tools).toEqual([
      tool,
      { name: 'web_search', native: { wire: 'responses', tool: webSearch } },
      { name: 'apply_patch', native: { wire: 'responses', tool: patch } },
    ]);
  });

  it('S2/N1: a Chat Completions tool that is not a function is kept whole, the function beside it as a schema', () => {
    const custom = { type: 'custom', custom: { name: 'apply_patch', format: { type: 'text' } } };
    const text = JSON.stringify({
      model: 'gpt-5',
      tools: [{ type: 'function', function: tool }, custom],
      messages,
    });
    expect(requestEnvelopeOf(parseSession(text).sessions[0])?.tools).toEqual([
      tool,
      { name: 'apply_patch', native: { wire: 'chat', tool: custom } },
    ]);
  });

  it('S2/N1: an Anthropic server tool is kept whole, never read as a function of its name', () => {
    const server = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 };
    const text = JSON.stringify({
      model: 'claude-sonnet-4-6',
      tools: [server, { name: 'bash', input_schema: { type: 'object' } }],
      messages: [{ role: 'user', content: 'Fix the test.' }],
    });
    const envelope = requestEnvelopeOf(parseSession(text, { from: 'anthropic' }).sessions[0]);
    expect(envelope?.tools).toEqual([
      { name: 'web_search', native: { wire: 'messages', tool: server } },
      { name: 'bash', parameters: { type: 'object' } },
    ]);
  });

  it('S2: a transcript or a request without a model has no envelope', () => {
    expect(requestEnvelopeOf(parseSession(JSON.stringify({ messages })).sessions[0])).toBeUndefined();
    expect(requestEnvelopeOf({ meta: {}, messages: [] })).toBeUndefined();
  });
});
