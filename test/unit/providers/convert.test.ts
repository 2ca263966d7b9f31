import { describe, expect, it } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { toAnthropicConversation } from '#src/providers/anthropic/convert.js';
import { aggregateAnthropicUsage, betasForPayload } from '#src/providers/anthropic/headers.js';
import { fromResponsesOutput, toResponsesInput } from '#src/providers/openai-responses/convert.js';
import { parseSse } from '#src/providers/sse.js';

const compactionItem = {
  type: 'compaction',
  id: 'cmp_1',
  encrypted_content: 'gAAAA-opaque',
  unknown_field: [1, { a: null }],
};
const reasoningItem = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA-rs' };

describe('Responses conversion (O3)', () => {
  it('O3: opaque items replay verbatim before their message; tool protocol maps to function_call items', () => {
    const history: Message[] = [
      msg.system('reminder: keep tests green'),
      msg.user('Run the tests.'),
      msg.assistant('', [{ id: 'call_A1', name: 'shell', arguments: '{"cmd":"npm test"}' }], {
        reasoningDetails: [JSON.stringify(reasoningItem)],
      }),
      msg.tool('call_A1', '12 passing', 'shell'),
      msg.assistant('', undefined, { reasoningDetails: [compactionItem] }),
      msg.assistant('All pass.'),
    ];
    expect(toResponsesInput(history)).toEqual([
      {
        type: 'message',
        role: 'developer',
        content: [{ type: 'input_text', text: 'reminder: keep tests green' }],
      },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Run the tests.' }] },
      reasoningItem,
      { type: 'function_call', call_id: 'call_A1', name: 'shell', arguments: '{"cmd":"npm test"}' },
      { type: 'function_call_output', call_id: 'call_A1', output: '12 passing' },
      compactionItem,
      { role: 'assistant', content: 'All pass.' },
    ]);
  });

  it('O3: returned output items become canonical messages that round-trip byte for byte', () => {
    const output = [
      {
        id: 'msg_u1',
        type: 'message',
        status: 'completed',
        role: 'user',
        content: [{ type: 'input_text', text: 'Run the tests.' }],
        extra: 'kept',
      },
      compactionItem,
    ];
    const canonical = fromResponsesOutput(output);
    expect(canonical[0]).toMatchObject({ role: 'user', content: 'Run the tests.' });
    expect(canonical[1]).toEqual({ role: 'assistant', content: '', reasoningDetails: [compactionItem] });
    expect(JSON.stringify(toResponsesInput(canonical))).toBe(JSON.stringify(output));
  });

  it('D1: Anthropic blocks in reasoningDetails never leak into a Responses request', () => {
    const m = msg.assistant('hi', undefined, {
      reasoningDetails: [
        { type: 'thinking', thinking: 't', signature: 's' },
        { type: 'compaction', content: 'sum' },
      ],
    });
    expect(toResponsesInput([m])).toEqual([{ role: 'assistant', content: 'hi' }]);
  });
});

describe('Anthropic conversion (A3)', () => {
  const block = {
    type: 'compaction',
    content: 'Summary so far',
    signature: 'sig-1',
    cache_control: { type: 'ephemeral' },
    future: 1,
  };
  it('A3: the latest compaction block is replayed raw as the first message; earlier turns are not sent', () => {
    const history: Message[] = [
      msg.system('You are a build agent.'),
      msg.user('old question'),
      msg.assistant('old answer', undefined, {
        reasoningDetails: [{ type: 'compaction', content: 'older summary' }],
      }),
      msg.assistant('', undefined, { reasoningDetails: [block] }),
      msg.user('Now add a lint step.'),
      msg.assistant('', [{ id: 'toolu_1', name: 'shell', arguments: '{"cmd":"npm run lint"}' }], {
        reasoningDetails: [{ type: 'thinking', thinking: 'lint', signature: 'th-sig' }],
      }),
      msg.tool('toolu_1', 'ok'),
      msg.tool('toolu_orphan', 'stray'),
    ];
    const conv = toAnthropicConversation(history);
    expect(conv.system).toBe('You are a build agent.');
    expect(conv.messages).toEqual([
      { role: 'assistant', content: [block] },
      { role: 'user', content: [{ type: 'text', text: 'Now add a lint step.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'lint', signature: 'th-sig' },
          { type: 'tool_use', id: 'toolu_1', name: 'shell', input: { cmd: 'npm run lint' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' },
          { type: 'text', text: 'stray' },
        ],
      },
    ]);
    expect(betasForPayload({ messages: conv.messages })).toEqual(['compact-2026-01-12']);
  });

  it('A2: betas are derived from the payload', () => {
    const edits = (types: string[]) => ({ context_management: { edits: types.map((type) => ({ type })) } });
    expect(
      betasForPayload(edits(['clear_thinking_20251015', 'clear_tool_uses_20250919', 'compact_20260112'])),
    ).toEqual(['compact-2026-01-12', 'context-management-2025-06-27']);
    expect(betasForPayload(edits(['compact_20260112']))).toEqual(['compact-2026-01-12']);
    expect(betasForPayload({ messages: [{ role: 'user', content: 'hi' }] })).toEqual([]);
  });

  it('A5: usage sums recognized iterations; top-level only without iteration data', () => {
    expect(
      aggregateAnthropicUsage({
        input_tokens: 1,
        output_tokens: 1,
        iterations: [
          { type: 'compaction', input_tokens: 100, output_tokens: 10 },
          { type: 'message', input_tokens: 20, output_tokens: 5, cache_read_input_tokens: 3 },
          { type: 'advisor_message', input_tokens: 1, output_tokens: 1 },
          { type: 'fallback_message', input_tokens: 1, output_tokens: 1 },
          { type: 'mystery', input_tokens: 1000, output_tokens: 1000 },
        ],
      }),
    ).toEqual({ inputTokens: 125, outputTokens: 17, cachedInputTokens: 3 });
    expect(aggregateAnthropicUsage({ input_tokens: 7, output_tokens: 2, iterations: [] })).toEqual({
      inputTokens: 7,
      outputTokens: 2,
      cachedInputTokens: 0,
    });
  });
});

describe('SSE framing: events, comments and multi-line data across chunks', () => {
  it('parses events split across chunks, CRLF, comments and multi-line data', async () => {
    async function* chunks() {
      yield 'event: a\r\nda';
      yield 'ta: {"x":1}\r\n\r\n: comment\n\ndata: line1\ndata: line2\n\n';
      yield 'data: partial-without-end';
    }
    const out = [];
    for await (const e of parseSse(chunks())) out.push(e);
    expect(out).toEqual([{ event: 'a', data: '{"x":1}' }, { data: 'line1\nline2' }]);
  });

  it('decodes a multi-byte character split across byte chunks; id and retry fields are not data', async () => {
    const bytes = new TextEncoder().encode('id: 7\nretry: 10\nevent: delta\ndata: {"t":"héllo 👋"}\n\n');
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 3) yield bytes.subarray(i, i + 3);
    }
    const out = [];
    for await (const e of parseSse(chunks())) out.push(e);
    expect(out).toEqual([{ event: 'delta', data: '{"t":"héllo 👋"}' }]);
  });
});
