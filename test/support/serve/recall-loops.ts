import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { request } from 'undici';
import { READ_FILE, SYSTEM } from '#dev/loops/loop-matrix.js';
import { recallFile, startRecallUpstream } from '#dev/fakes/recall-model.js';
import { startServer } from '#src/serve/index.js';

/**
 * Client loops for the recall tests: each official client (or, for Gemini, the wire as Gemini
 * CLI writes it) reads the files the model asks for, one per turn, until it answers. Each
 * records the proxy's recall count per answer and, for streams, the text the client read.
 */

export const RECALL_TASK = 'Read the files one by one, then tell me the marker at the top of the first one.';
const FILE_TOKENS = 2_500;
const TASK = RECALL_TASK;

/** What a client loop saw: its final text, the tools it was asked to call, and the proxy's recall counts. */
export interface Seen {
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

/** An Anthropic agent loop; `tokensOf` gives the size of file `n` (each the same by default). */
export async function anthropicLoop(
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
      const texts = data.content.filter((b): b is Anthropic.TextBlock => b.type === 'text');
      return { ...seen, final: texts.map((b) => b.text).join('') };
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

/** How a Gemini client asks: streamed as server-sent events, one JSON answer, or a stream as one JSON array. */
export type GeminiMode = 'sse' | 'json' | 'array';

/** Reads a Gemini answer of any mode as its chunks. */
async function geminiChunks(body: AsyncIterable<Buffer> & { text(): Promise<string> }, mode: GeminiMode) {
  const text = await body.text();
  if (mode !== 'sse') {
    const v = JSON.parse(text) as unknown;
    return (Array.isArray(v) ? v : [v]) as any[];
  }
  return text
    .split(/\r?\n\r?\n/)
    .map((f) =>
      f
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join(''),
    )
    .filter((d) => d !== '')
    .map((d) => JSON.parse(d) as any);
}

/** A Gemini loop on the wire as Gemini CLI writes it (items `{parts, role}`), in one of the three modes. */
export async function geminiLoop(proxy: string, mode: GeminiMode, session: string): Promise<Seen> {
  const contents: any[] = [{ parts: [{ text: TASK }], role: 'user' }];
  const tools = [
    {
      functionDeclarations: [
        {
          name: READ_FILE.name,
          description: READ_FILE.description,
          parametersJsonSchema: READ_FILE.parameters,
        },
      ],
    },
  ];
  const seen: Seen = { final: '', calledTools: [], recallRounds: [] };
  const method =
    mode === 'json' ? 'generateContent' : `streamGenerateContent${mode === 'sse' ? '?alt=sse' : ''}`;
  for (let step = 0; step < 20; step++) {
    const res = await request(`${proxy}/v1beta/models/gemini-2.5-flash:${method}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-goog-api-key': 'gemini-key',
        'x-compactor-session': session,
      },
      body: JSON.stringify({
        contents,
        systemInstruction: { parts: [{ text: SYSTEM }], role: 'user' },
        tools,
      }),
    });
    if (res.statusCode !== 200) throw new Error(`gemini ${res.statusCode}: ${await res.body.text()}`);
    seen.recallRounds.push(Number(res.headers['x-compactor-recalls'] ?? 0));
    const parts = (await geminiChunks(res.body, mode)).flatMap(
      (c) => c?.candidates?.[0]?.content?.parts ?? [],
    );
    const text = parts.map((p: any) => (typeof p.text === 'string' ? p.text : '')).join('');
    const calls = parts.filter((p: any) => p.functionCall).map((p: any) => p.functionCall);
    contents.push({
      parts: [...(text ? [{ text }] : []), ...calls.map((functionCall: any) => ({ functionCall }))],
      role: 'model',
    });
    if (calls.length === 0) return { ...seen, final: text };
    for (const c of calls) seen.calledTools.push(c.name);
    contents.push({
      parts: calls.map((c: any) => ({
        functionResponse: {
          id: c.id,
          name: c.name,
          response: { output: recallFile(Number(/\d+/.exec(c.args.path)![0]), FILE_TOKENS) },
        },
      })),
      role: 'user',
    });
  }
  return seen;
}

export const RECALL_LOOPS = [
  { protocol: 'openai-responses', name: 'responses', run: responsesLoop },
  { protocol: 'openai-chat', name: 'chat', run: chatLoop },
  { protocol: 'anthropic', name: 'anthropic', run: anthropicLoop },
  {
    protocol: 'gemini',
    name: 'gemini',
    run: (proxy: string, stream: boolean) =>
      geminiLoop(proxy, stream ? 'sse' : 'json', `recall-gemini-${stream}`),
  },
] as const;

/** The recall model on 127.0.0.1 and `compactor serve` in front of it for all four protocols, at `window`. */
export async function startRecallProxy(options: {
  window: number;
  files: number;
  textBeforeRecall?: string;
}) {
  const upstream = await startRecallUpstream(options);
  const server = await startServer({
    port: 0,
    capacity: options.window,
    anthropicUpstream: upstream.url,
    openaiUpstream: upstream.url,
    geminiUpstream: upstream.url.replace(/\/v1$/, ''),
    http: { retries: 0 },
    summarizer: 'offline',
  });
  return { upstream, server };
}
