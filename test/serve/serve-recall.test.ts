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

async function chatLoop(proxy: string): Promise<Seen> {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy}/v1`, maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: TASK },
  ];
  const seen: Seen = { final: '', calledTools: [], recallRounds: [] };
  for (let step = 0; step < 20; step++) {
    const { data, response } = await client.chat.completions
      .create(
        {
          model: 'gpt-4o',
          tools: [{ type: 'function', function: READ_FILE }],
          max_completion_tokens: 512,
          messages,
        },
        { headers: { 'x-compactor-session': 'recall-chat' } },
      )
      .withResponse();
    seen.recallRounds.push(Number(response.headers.get('x-compactor-recalls') ?? 0));
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

async function anthropicLoop(proxy: string): Promise<Seen> {
  const client = new Anthropic({ apiKey: 'sk-test', baseURL: proxy, maxRetries: 0 });
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: TASK }];
  const tools = [
    { name: READ_FILE.name, description: READ_FILE.description, input_schema: READ_FILE.parameters },
  ];
  const seen: Seen = { final: '', calledTools: [], recallRounds: [] };
  for (let step = 0; step < 20; step++) {
    const { data, response } = await client.messages
      .create(
        { model: 'claude-sonnet-4-6', max_tokens: 512, system: SYSTEM, tools, messages },
        { headers: { 'x-compactor-session': 'recall-anthropic' } },
      )
      .withResponse();
    seen.recallRounds.push(Number(response.headers.get('x-compactor-recalls') ?? 0));
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
        content: recallFile(Number(/\d+/.exec((c.input as { path: string }).path)![0]), FILE_TOKENS),
      })),
    });
  }
  return seen;
}

const LOOPS = [
  { protocol: 'openai-chat', run: chatLoop },
  { protocol: 'anthropic', run: anthropicLoop },
] as const;

describe('compactor serve answers the model recall calls itself', () => {
  for (const { protocol, run } of LOOPS) {
    it(`C6: ${protocol}: a task that needs a cleared file gets the right answer; the client never sees recall`, async () => {
      const { upstream, server } = await setup();
      const seen = await run(server.url);
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
        await fetch(
          `${server.url}/compactor/sessions/recall-${protocol === 'anthropic' ? 'anthropic' : 'chat'}`,
        )
      ).json()) as { recallTurns: number };
      expect(state.recallTurns).toBe(1);
    });
  }
});
