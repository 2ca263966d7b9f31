/**
 * Agent loops written with the official clients (`@anthropic-ai/sdk`, `openai`) against
 * `compactor serve`: each step the model reads a file, the loop answers with a large tool
 * result and resends its whole history, as real agents do. What the upstream received is
 * read back into the loop matrix's prompt shape, to be counted and checked with tiktoken.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { SeenMessage, SeenPrompt } from '#dev/loops/prompt-audit.js';
import { textsOf } from '#dev/loops/prompt-audit.js';
import { READ_FILE, SYSTEM } from '#dev/loops/loop-matrix.js';
import { sourceText } from '#dev/loops/source-text.js';
import { pieces } from '#dev/fakes/agent-wire.js';

export type ServeProtocol = 'anthropic' | 'openai-chat' | 'openai-responses';

export interface ClientLoop {
  protocol: ServeProtocol;
  stream: boolean;
  /** The proxy's base URL (`http://127.0.0.1:PORT`). */
  proxy: string;
  /** Names the loop for the fake model (its call ids carry it). */
  loop: string;
  task: string;
  steps: number;
  resultTokens: number;
  /** Tokens of the file read at `step`, when they vary from step to step (default: `resultTokens`). */
  resultTokensAt?(step: number): number;
  model: string;
  maxTokens: number;
  /** How the proxy learns the session: our header, the id the protocol already has, or nothing (the history). */
  identify: 'header' | 'client-field' | 'history';
  /** A credential the upstream must get and nobody may log. */
  apiKey: string;
  /** The agent's system prompt (default: the loop matrix's one line). */
  system?: string;
  /** Anthropic: ask the API to cache each request up to its last block (top-level `cache_control`), as agents do. */
  cacheControl?: boolean;
}

/** What a loop saw: the final answer and, per streamed step, whether its events arrived whole and in order. */
export interface LoopResult {
  finalText: string;
  streamProblems: string[];
  sessions: Set<string>;
  /** The `x-compactor-strategy` headers of the answers that compacted, in order. */
  strategies: string[];
}

const PATH = (step: number) => `src/file-${step}.ts`;

function headersFor(l: ClientLoop, step: number): Record<string, string> {
  return {
    'x-test-step': String(step),
    ...(l.identify === 'header' ? { 'x-compactor-session': l.loop } : {}),
  };
}

const defaultHeaders = (l: ClientLoop) => ({ 'x-test-loop': l.loop, 'x-test-steps': String(l.steps) });

/** A fetch for the official clients that notes the strategy of every answer that compacted. */
function notingStrategies(strategies: string[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const strategy = response.headers.get('x-compactor-strategy');
    if (strategy !== null) strategies.push(strategy);
    return response;
  };
}

/** Checks a step's call: the model's call for this step, whole. */
function checkCall(l: ClientLoop, step: number, id: string, args: unknown, problems: string[]): void {
  const path =
    typeof args === 'string'
      ? (JSON.parse(args) as { path?: string }).path
      : (args as { path?: string }).path;
  if (id !== `call_${l.loop}_${step}` || path !== PATH(step))
    problems.push(
      `step ${step}: call ${id} reads ${path} (expected call_${l.loop}_${step} reading ${PATH(step)})`,
    );
}

async function anthropicLoop(l: ClientLoop): Promise<LoopResult> {
  const strategies: string[] = [];
  const client = new Anthropic({
    apiKey: l.apiKey,
    baseURL: l.proxy,
    maxRetries: 0,
    defaultHeaders: defaultHeaders(l),
    fetch: notingStrategies(strategies),
  });
  const source = sourceText();
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: l.task }];
  const problems: string[] = [];
  const sessions = new Set<string>();
  const tools = [
    { name: READ_FILE.name, description: READ_FILE.description, input_schema: READ_FILE.parameters },
  ];
  for (let step = 0; ; step++) {
    const params = {
      model: l.model,
      max_tokens: l.maxTokens,
      system: l.system ?? SYSTEM,
      tools,
      messages,
      ...(l.identify === 'client-field' ? { metadata: { user_id: l.loop } } : {}),
      ...(l.cacheControl === true ? { cache_control: { type: 'ephemeral' as const } } : {}),
    };
    const options = { headers: headersFor(l, step) };
    let message: Anthropic.Message;
    if (l.stream) {
      const stream = client.messages.stream(params, options);
      const types: string[] = [];
      stream.on('streamEvent', (e) => types.push(e.type));
      message = await stream.finalMessage();
      const { response } = await stream.withResponse();
      sessions.add(response.headers.get('x-compactor-session') ?? '');
      // Each block's text or arguments arrive in the fake's pieces, one delta each.
      const expected = ['message_start'];
      for (const b of message.content) {
        const sent = b.type === 'text' ? b.text : b.type === 'tool_use' ? JSON.stringify(b.input) : '';
        expected.push(
          'content_block_start',
          ...pieces(sent).map(() => 'content_block_delta'),
          'content_block_stop',
        );
      }
      expected.push('message_delta', 'message_stop');
      if (types.join() !== expected.join()) problems.push(`step ${step}: events ${types.join()}`);
    } else {
      const { data, response } = await client.messages.create(params, options).withResponse();
      sessions.add(response.headers.get('x-compactor-session') ?? '');
      message = data;
    }
    messages.push({ role: 'assistant', content: message.content });
    const call = message.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    const text = message.content.find((b): b is Anthropic.TextBlock => b.type === 'text')?.text ?? '';
    if (!call) return { finalText: text, streamProblems: problems, sessions, strategies };
    if (text !== `Step ${step}: reading the next file.`) problems.push(`step ${step}: text "${text}"`);
    checkCall(l, step, call.id, call.input, problems);
    messages.push({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: call.id,
          content: source.read(step, l.resultTokensAt?.(step) ?? l.resultTokens),
        },
      ],
    });
  }
}

/** The official OpenAI client pointed at the proxy. */
const openaiClient = (l: ClientLoop, strategies: string[]) =>
  new OpenAI({
    apiKey: l.apiKey,
    baseURL: `${l.proxy}/v1`,
    maxRetries: 0,
    defaultHeaders: defaultHeaders(l),
    fetch: notingStrategies(strategies),
  });

async function chatLoop(l: ClientLoop): Promise<LoopResult> {
  const strategies: string[] = [];
  const client = openaiClient(l, strategies);
  const source = sourceText();
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: l.system ?? SYSTEM },
    { role: 'user', content: l.task },
  ];
  const problems: string[] = [];
  const sessions = new Set<string>();
  const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: READ_FILE }];
  for (let step = 0; ; step++) {
    const params = {
      model: l.model,
      tools,
      max_completion_tokens: l.maxTokens,
      ...(l.identify === 'client-field' ? { prompt_cache_key: l.loop } : {}),
      messages,
    };
    const options = { headers: headersFor(l, step) };
    let message: OpenAI.ChatCompletionMessage;
    if (l.stream) {
      const stream = client.chat.completions.stream({ ...params, stream: true }, options);
      let chunks = 0;
      stream.on('chunk', () => chunks++);
      message = (await stream.finalChatCompletion()).choices[0].message;
      // The role, each piece of the text and of the call's arguments, and the finish.
      const call = message.tool_calls?.[0];
      const args = call?.type === 'function' ? pieces(call.function.arguments).length : 0;
      const expected = 2 + pieces(message.content ?? '').length + args;
      if (chunks !== expected) problems.push(`step ${step}: ${chunks} chunks (expected ${expected})`);
    } else {
      const { data, response } = await client.chat.completions.create(params, options).withResponse();
      sessions.add(response.headers.get('x-compactor-session') ?? '');
      message = data.choices[0].message;
    }
    messages.push(message);
    const call = message.tool_calls?.[0];
    if (!call || call.type !== 'function')
      return { finalText: message.content ?? '', streamProblems: problems, sessions, strategies };
    if (message.content !== `Step ${step}: reading the next file.`)
      problems.push(`step ${step}: text "${message.content}"`);
    checkCall(l, step, call.id, call.function.arguments, problems);
    messages.push({
      role: 'tool',
      tool_call_id: call.id,
      content: source.read(step, l.resultTokensAt?.(step) ?? l.resultTokens),
    });
  }
}

async function responsesLoop(l: ClientLoop): Promise<LoopResult> {
  const strategies: string[] = [];
  const client = openaiClient(l, strategies);
  const source = sourceText();
  const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: l.task }];
  const problems: string[] = [];
  const sessions = new Set<string>();
  const tools: OpenAI.Responses.Tool[] = [{ type: 'function', strict: false, ...READ_FILE }];
  for (let step = 0; ; step++) {
    const params = {
      model: l.model,
      instructions: l.system ?? SYSTEM,
      tools,
      max_output_tokens: l.maxTokens,
      store: false,
      ...(l.identify === 'client-field' ? { prompt_cache_key: l.loop } : {}),
      input,
    };
    const options = { headers: headersFor(l, step) };
    let response: OpenAI.Responses.Response;
    if (l.stream) {
      const stream = client.responses.stream(params, options);
      const types: string[] = [];
      stream.on('event', (e) => types.push(e.type));
      response = await stream.finalResponse();
      // The message's text, then the call's arguments, each in the fake's pieces.
      const expected = ['response.created', 'response.in_progress'];
      for (const item of response.output) {
        if (item.type === 'message') {
          const text = item.content.map((c) => (c.type === 'output_text' ? c.text : '')).join('');
          expected.push(
            'response.output_item.added',
            'response.content_part.added',
            ...pieces(text).map(() => 'response.output_text.delta'),
            'response.output_text.done',
            'response.content_part.done',
            'response.output_item.done',
          );
        } else if (item.type === 'function_call')
          expected.push(
            'response.output_item.added',
            ...pieces(item.arguments).map(() => 'response.function_call_arguments.delta'),
            'response.function_call_arguments.done',
            'response.output_item.done',
          );
      }
      expected.push('response.completed');
      if (types.join() !== expected.join()) problems.push(`step ${step}: events ${types.join()}`);
    } else {
      const { data, response: http } = await client.responses.create(params, options).withResponse();
      sessions.add(http.headers.get('x-compactor-session') ?? '');
      response = data;
    }
    input.push(...(response.output as OpenAI.Responses.ResponseInputItem[]));
    const call = response.output.find(
      (o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call',
    );
    if (!call) return { finalText: response.output_text, streamProblems: problems, sessions, strategies };
    checkCall(l, step, call.call_id, call.arguments, problems);
    input.push({
      type: 'function_call_output',
      call_id: call.call_id,
      output: source.read(step, l.resultTokensAt?.(step) ?? l.resultTokens),
    });
  }
}

/** Runs one loop to its end with the protocol's official client. */
export function runClientLoop(l: ClientLoop): Promise<LoopResult> {
  if (l.protocol === 'anthropic') return anthropicLoop(l);
  if (l.protocol === 'openai-chat') return chatLoop(l);
  return responsesLoop(l);
}

/** An upstream request of `protocol` in the loop matrix's prompt shape (for the tiktoken audit). */
export function seenPromptOf(protocol: ServeProtocol, body: any): SeenPrompt {
  const system: string[] = [];
  const messages: SeenMessage[] = [];
  const text = (role: SeenMessage['role'], texts: string[]) => messages.push({ role, texts, calls: [] });
  if (protocol === 'anthropic') {
    if (body.system !== undefined) system.push(...textsOf(body.system));
    for (const m of body.messages) {
      const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
      const own: SeenMessage = { role: m.role, texts: [], calls: [] };
      for (const b of blocks) {
        if (b.type === 'text') own.texts.push(b.text);
        else if (b.type === 'tool_use')
          own.calls.push({ id: b.id, name: b.name, arguments: JSON.stringify(b.input) });
        // A compaction block's summary is what the model reads of everything before it.
        else if (b.type === 'compaction' && typeof b.content === 'string') own.texts.push(b.content);
        else if (b.type === 'tool_result')
          messages.push({ role: 'tool', texts: textsOf(b.content), calls: [], answers: b.tool_use_id });
      }
      if (own.texts.length > 0 || own.calls.length > 0) messages.push(own);
    }
  } else if (protocol === 'openai-chat') {
    for (const m of body.messages) {
      if (m.role === 'system' || m.role === 'developer') system.push(...textsOf(m.content));
      else if (m.role === 'tool')
        messages.push({ role: 'tool', texts: textsOf(m.content), calls: [], answers: m.tool_call_id });
      else
        messages.push({
          role: m.role,
          texts: textsOf(m.content),
          calls: (m.tool_calls ?? []).map((c: any) => ({
            id: c.id,
            name: c.function.name,
            arguments: c.function.arguments,
          })),
        });
    }
  } else {
    if (typeof body.instructions === 'string') system.push(body.instructions);
    for (const item of body.input) {
      if (item.type === 'function_call')
        messages.push({
          role: 'assistant',
          texts: [],
          calls: [{ id: item.call_id, name: item.name, arguments: item.arguments }],
        });
      else if (item.type === 'function_call_output')
        messages.push({ role: 'tool', texts: textsOf(item.output), calls: [], answers: item.call_id });
      else if (item.role === 'system' || item.role === 'developer') system.push(...textsOf(item.content));
      else text(item.role, textsOf(item.content));
    }
  }
  return { system, messages, tools: JSON.stringify(body.tools ?? []) };
}

/** The conversation list of an upstream request (messages or input). */
export function conversationOf(protocol: ServeProtocol, body: any): unknown[] {
  return protocol === 'openai-responses' ? body.input : body.messages;
}
