import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startServer, type RunningServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { READ_FILE, SYSTEM } from '#dev/loops/loop-matrix.js';
import { wirePrompt } from '#dev/fakes/wire-prompt.js';
import {
  LOST,
  RECALL_FINAL,
  markerOf,
  recallFile,
  recallPath,
  startRecallUpstream,
} from '#dev/fakes/recall-model.js';
import type { FakeServer } from '#dev/fakes/fake-http.js';
import { topLevelValueText } from '#src/serve/json-splice.js';

afterAll(() => freeEncoders());

const WINDOW = 16_000;
const FILES = 8;
const FILE_TOKENS = 2_500;
const TASK = 'Read the files one by one, then tell me the marker at the top of the first one.';
const started: Array<RunningServer | FakeServer> = [];

afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

async function setup() {
  const upstream = await startRecallUpstream({ window: WINDOW, files: FILES });
  const server = await startServer({
    port: 0,
    capacity: WINDOW,
    anthropicUpstream: upstream.url,
    openaiUpstream: upstream.url,
    http: { retries: 0 },
    summarizer: 'offline',
  });
  started.push(upstream, server);
  return { upstream, server };
}

/** What a client loop saw: its final text, the tools it was asked to call, and the proxy's recall counts. */
interface Seen {
  final: string;
  calledTools: string[];
  recallRounds: number[];
}

/** A streamed chat answer joined into the answer it stands for (text and tool calls). */
async function joined(chunks: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<OpenAI.ChatCompletion> {
  let content = '';
  const calls: OpenAI.ChatCompletionMessageFunctionToolCall[] = [];
  for await (const chunk of chunks) {
    const delta = chunk.choices[0]?.delta;
    content += delta?.content ?? '';
    for (const d of delta?.tool_calls ?? []) {
      calls[d.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
      if (d.id) calls[d.index].id = d.id;
      calls[d.index].function.name += d.function?.name ?? '';
      calls[d.index].function.arguments += d.function?.arguments ?? '';
    }
  }
  const message = {
    role: 'assistant' as const,
    content,
    refusal: null,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
  return {
    id: 'joined',
    object: 'chat.completion',
    created: 0,
    model: 'gpt-4o',
    choices: [{ index: 0, message, finish_reason: 'stop', logprobs: null }],
  };
}

async function chatLoop(proxy: string, stream: boolean): Promise<Seen> {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy}/v1`, maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: TASK },
  ];
  const seen: Seen = { final: '', calledTools: [], recallRounds: [] };
  for (let step = 0; step < 20; step++) {
    const params = {
      model: 'gpt-4o',
      tools: [{ type: 'function' as const, function: READ_FILE }],
      max_completion_tokens: 512,
      messages,
    };
    const options = { headers: { 'x-compactor-session': `recall-chat-${stream}` } };
    let data: OpenAI.ChatCompletion;
    if (stream) {
      const answer = await client.chat.completions
        .create({ ...params, stream: true }, options)
        .withResponse();
      seen.recallRounds.push(Number(answer.response.headers.get('x-compactor-recalls') ?? 0));
      data = await joined(answer.data);
    } else {
      const answer = await client.chat.completions.create(params, options).withResponse();
      data = answer.data;
      seen.recallRounds.push(Number(answer.response.headers.get('x-compactor-recalls') ?? 0));
    }
    const message = data.choices[0].message;
    messages.push(message);
    const calls = (message.tool_calls ?? []).filter((c) => c.type === 'function');
    if (calls.length === 0) return { ...seen, final: message.content ?? '' };
    for (const c of calls) {
      seen.calledTools.push(c.function.name);
      const { path } = JSON.parse(c.function.arguments) as { path: string };
      messages.push({
        role: 'tool',
        tool_call_id: c.id,
        content: recallFile(Number(/\d+/.exec(path)![0]), FILE_TOKENS),
      });
    }
  }
  return seen;
}

async function anthropicLoop(
  proxy: string,
  stream: boolean,
  tokensOf: (n: number) => number = () => FILE_TOKENS,
): Promise<Seen> {
  const client = new Anthropic({ apiKey: 'sk-test', baseURL: proxy, maxRetries: 0 });
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: TASK }];
  const tools = [
    { name: READ_FILE.name, description: READ_FILE.description, input_schema: READ_FILE.parameters },
  ];
  const seen: Seen = { final: '', calledTools: [], recallRounds: [] };
  for (let step = 0; step < 20; step++) {
    const params = { model: 'claude-sonnet-4-6', max_tokens: 512, system: SYSTEM, tools, messages };
    const options = { headers: { 'x-compactor-session': `recall-anthropic-${stream}` } };
    let data: Anthropic.Message;
    if (stream) {
      const events = client.messages.stream(params, options);
      data = await events.finalMessage();
      const { response } = await events.withResponse();
      seen.recallRounds.push(Number(response.headers.get('x-compactor-recalls') ?? 0));
    } else {
      const answer = await client.messages.create(params, options).withResponse();
      data = answer.data;
      seen.recallRounds.push(Number(answer.response.headers.get('x-compactor-recalls') ?? 0));
    }
    messages.push({ role: 'assistant', content: data.content });
    const calls = data.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    if (calls.length === 0) {
      const text = data.content.find((b): b is Anthropic.TextBlock => b.type === 'text')?.text ?? '';
      return { ...seen, final: text };
    }
    for (const c of calls) seen.calledTools.push(c.name);
    messages.push({
      role: 'user',
      content: calls.map((c) => ({
        type: 'tool_result' as const,
        tool_use_id: c.id,
        content: (() => {
          const n = Number(/\d+/.exec((c.input as { path: string }).path)![0]);
          return recallFile(n, tokensOf(n));
        })(),
      })),
    });
  }
  return seen;
}

async function responsesLoop(proxy: string, stream: boolean): Promise<Seen> {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy}/v1`, maxRetries: 0 });
  const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: TASK }];
  const tools = [{ type: 'function' as const, strict: false, ...READ_FILE }];
  const seen: Seen = { final: '', calledTools: [], recallRounds: [] };
  for (let step = 0; step < 20; step++) {
    const params = { model: 'gpt-4o', instructions: SYSTEM, tools, max_output_tokens: 512, input };
    const options = { headers: { 'x-compactor-session': `recall-responses-${stream}` } };
    let data: OpenAI.Responses.Response | undefined;
    if (stream) {
      const answer = await client.responses.create({ ...params, stream: true }, options).withResponse();
      seen.recallRounds.push(Number(answer.response.headers.get('x-compactor-recalls') ?? 0));
      for await (const e of answer.data) if (e.type === 'response.completed') data = e.response;
    } else {
      const answer = await client.responses.create(params, options).withResponse();
      seen.recallRounds.push(Number(answer.response.headers.get('x-compactor-recalls') ?? 0));
      data = answer.data;
    }
    const output = data!.output;
    input.push(...(output as OpenAI.Responses.ResponseInputItem[]));
    const calls = output.filter(
      (o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call',
    );
    const text = output.flatMap((o) =>
      o.type === 'message' ? o.content.flatMap((c) => (c.type === 'output_text' ? [c.text] : [])) : [],
    );
    if (calls.length === 0) return { ...seen, final: text.join('') };
    for (const c of calls) {
      seen.calledTools.push(c.name);
      const n = Number(/\d+/.exec((JSON.parse(c.arguments) as { path: string }).path)![0]);
      input.push({ type: 'function_call_output', call_id: c.call_id, output: recallFile(n, FILE_TOKENS) });
    }
  }
  return seen;
}

const LOOPS = [
  { protocol: 'openai-responses', name: 'responses', run: responsesLoop },
  { protocol: 'openai-chat', name: 'chat', run: chatLoop },
  { protocol: 'anthropic', name: 'anthropic', run: anthropicLoop },
] as const;

describe('compactor serve answers the model recall calls itself', () => {
  for (const { protocol, name, run } of LOOPS)
    for (const stream of [false, true])
      it(`C6: ${protocol}${stream ? ' (streamed)' : ''}: a task that needs a cleared file gets the right answer; the client never sees recall`, async () => {
        const { upstream, server } = await setup();
        const seen = await run(server.url, stream);
        expect(seen.final).toBe(RECALL_FINAL(markerOf(0)));
        expect(seen.final).not.toBe(LOST);
        expect(seen.calledTools).toEqual(Array.from({ length: FILES }, () => 'read_file'));
        // One recall round, on the last request; every other request went upstream once.
        expect(seen.recallRounds.slice(0, -1).every((n) => n === 0)).toBe(true);
        expect(seen.recallRounds.at(-1)).toBe(1);
        expect(upstream.requests).toHaveLength(FILES + 2);
        // The first file really was cleared before the model asked for it.
        const beforeRecall = wirePrompt(protocol, upstream.requests.at(-2)!.body);
        const texts = beforeRecall.messages.flatMap((m) => m.texts).join('\n');
        expect(texts).not.toContain(markerOf(0));
        expect(texts).toContain(recallPath(0));
        // The tool list is the same bytes in every request of the session, the recall tool included.
        const tools = upstream.requests.map((r) => JSON.stringify(r.body.tools));
        expect(new Set(tools).size).toBe(1);
        expect(tools[0]).toContain('"recall"');
        expect(upstream.violations).toEqual([]);
        const state = (await (
          await fetch(`${server.url}/compactor/sessions/recall-${name}-${stream}`)
        ).json()) as { recallTurns: number };
        expect(state.recallTurns).toBe(1);
      });
});

describe('a recall round fits the window like the request before it', () => {
  it('C6: a recalled original larger than the room left is cut to the lines that fit, with the range to ask next; nothing goes over the window and the tool list keeps its bytes', async () => {
    const { upstream, server } = await setup();
    // The first file alone is more than the window holds: the recall round has no room for all of it.
    const seen = await anthropicLoop(server.url, false, (n) => (n === 0 ? 20_000 : FILE_TOKENS));
    expect(seen.final).toBe(RECALL_FINAL(markerOf(0)));
    expect(seen.recallRounds.at(-1)).toBe(1);
    expect(upstream.violations).toEqual([]);
    const last = wirePrompt('anthropic', upstream.requests.at(-1)!.body);
    const answer = last.messages.at(-1)!.texts.join('\n');
    expect(answer).toMatch(
      /^lines 1-\d+ of \d+ of r-[0-9a-f]{8} \(only these fit the context window; recall r-[0-9a-f]{8} with a range from line \d+ for the rest\):\n/,
    );
    expect(answer).toContain(markerOf(0));
    // The same bytes of tools in every request, the client's own and the recall tool's.
    const tools = upstream.requests.map((r) => topLevelValueText(r.raw, 'tools'));
    expect(new Set(tools).size).toBe(1);
    expect(tools[0]).toContain('"recall"');
  });
});
