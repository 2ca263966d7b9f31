import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import {
  Agent,
  OpenAIResponsesModel,
  run,
  setTracingDisabled,
  tool as agentsTool,
  type AgentInputItem,
} from '@openai/agents';
import { generateText, jsonSchema, stepCountIs, streamText, tool as aiTool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createAgent, tool as langchainTool } from 'langchain';
import OpenAI from 'openai';
import { z } from 'zod';
import { compactorMiddleware as aiSdkMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { compactorMiddleware as langchainMiddleware } from '../../src/adapters/langchain/index.js';
import { compactorInputFilter } from '../../src/adapters/openai-agents/index.js';
import {
  FINAL_ANSWER,
  READ_FILE,
  SYSTEM,
  TASK,
  type LoopKind,
  type LoopRunner,
  type LoopScript,
} from './loop-matrix.js';
import { streamOfReply, type TestModelReply } from './ai-sdk-reply.js';
import { startFakeResponses } from './fake-responses.js';
import { textsOf, type SeenMessage, type SeenPrompt } from './prompt-audit.js';

setTracingDisabled(true); // offline: no trace exporter

const readFileInput = z.object({ path: z.string().describe('Path relative to the repository root') });

// ---- AI SDK: a framework test model behind the compactor middleware -----------------------------

const usage = {
  inputTokens: { total: 1_000, noCache: 1_000, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 20, text: 20, reasoning: 0 },
};

/** An AI SDK prompt (language-model level, after the middleware) in plain pieces. */
export function seenAiSdk(prompt: unknown, tools: unknown): SeenPrompt {
  const seen: SeenPrompt = { system: [], messages: [], tools: JSON.stringify(tools ?? []) };
  for (const m of prompt as Array<{ role: SeenMessage['role']; content: unknown }>) {
    if (m.role === 'system') {
      seen.system.push(...textsOf(m.content));
      continue;
    }
    const parts =
      typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as never[]);
    const calls: SeenMessage['calls'] = [];
    const texts: string[] = [];
    for (const p of parts as Array<Record<string, unknown>>) {
      if (p.type === 'tool-call')
        calls.push({
          id: String(p.toolCallId),
          name: String(p.toolName),
          arguments: typeof p.input === 'string' ? p.input : JSON.stringify(p.input),
        });
      else if (p.type === 'tool-result')
        seen.messages.push({
          role: 'tool',
          texts: textsOf(p.output),
          calls: [],
          answers: String(p.toolCallId),
        });
      else texts.push(...textsOf(p));
    }
    if (m.role !== 'tool') seen.messages.push({ role: m.role, texts, calls });
  }
  return seen;
}

function aiSdkLoop(mode: 'generate' | 'stream'): LoopRunner {
  return async (script: LoopScript) => {
    let step = 0;
    const reply = (prompt: unknown, tools: unknown): TestModelReply => {
      script.seen(seenAiSdk(prompt, tools));
      const n = step++;
      if (n >= script.steps) return { content: [{ type: 'text', text: FINAL_ANSWER }], finish: 'stop' };
      const s = script.step(n);
      return {
        content: [
          { type: 'text' as const, text: s.thought },
          {
            type: 'tool-call' as const,
            toolCallId: `call-${n}`,
            toolName: READ_FILE.name,
            input: JSON.stringify({ path: s.path }),
          },
        ],
        finish: 'tool-calls' as const,
      };
    };
    const agent = new MockLanguageModelV4({
      provider: 'test',
      modelId: 'loop-model',
      doGenerate: async ({ prompt, tools }) => {
        const r = reply(prompt, tools);
        return {
          content: r.content,
          finishReason: { unified: r.finish, raw: r.finish },
          usage,
          warnings: [],
        };
      },
      doStream: async ({ prompt, tools }) => streamOfReply(reply(prompt, tools), usage),
    });
    let reads = 0;
    const common = {
      model: wrapLanguageModel({
        model: agent,
        middleware: aiSdkMiddleware({ limits: { capacity: script.capacity } }),
      }),
      system: SYSTEM,
      messages: [{ role: 'user' as const, content: TASK }],
      tools: {
        [READ_FILE.name]: aiTool({
          description: READ_FILE.description,
          inputSchema: jsonSchema<{ path: string }>(READ_FILE.parameters),
          execute: async () => script.read(reads++),
        }),
      },
      stopWhen: stepCountIs(script.steps + 1),
    };
    if (mode === 'generate') return (await generateText(common)).text;
    let failed: unknown;
    const result = streamText({ ...common, onError: ({ error }) => void (failed ??= error) });
    const text = await Promise.resolve(result.text).catch((e: unknown) => {
      throw failed ?? e;
    });
    if (failed !== undefined) throw failed;
    return text;
  };
}

// ---- LangChain: createAgent with the framework's fake chat model --------------------------------

/** LangChain messages as the chat model received them, in plain pieces. */
export function seenLangChain(messages: BaseMessage[], tools: string): SeenPrompt {
  const seen: SeenPrompt = { system: [], messages: [], tools };
  for (const m of messages) {
    const type = m.getType();
    if (type === 'system') seen.system.push(...textsOf(m.content));
    else if (type === 'tool')
      seen.messages.push({
        role: 'tool',
        texts: textsOf(m.content),
        calls: [],
        answers: (m as unknown as { tool_call_id: string }).tool_call_id,
      });
    else
      seen.messages.push({
        role: type === 'ai' ? 'assistant' : 'user',
        texts: textsOf(m.content),
        calls: ((m as AIMessage).tool_calls ?? []).map((c) => ({
          id: c.id ?? '',
          name: c.name,
          arguments: JSON.stringify(c.args),
        })),
      });
  }
  return seen;
}

function langchainLoop(mode: 'invoke' | 'stream'): LoopRunner {
  return async (script: LoopScript) => {
    let reads = 0;
    const readFile = langchainTool(() => script.read(reads++), {
      name: READ_FILE.name,
      description: READ_FILE.description,
      schema: readFileInput,
    });
    // The schema LangChain's OpenAI-style providers send for the tool.
    const tools = JSON.stringify([convertToOpenAITool(readFile)]);
    const model = fakeModel();
    for (let n = 0; n <= script.steps; n++)
      model.respond((messages: BaseMessage[]) => {
        script.seen(seenLangChain(messages, tools));
        if (n >= script.steps) return new AIMessage(FINAL_ANSWER);
        const s = script.step(n);
        return new AIMessage({
          content: s.thought,
          tool_calls: [{ id: `call-${n}`, name: READ_FILE.name, args: { path: s.path } }],
        });
      });
    const agent = createAgent({
      model,
      tools: [readFile],
      systemPrompt: SYSTEM,
      middleware: [langchainMiddleware({ limits: { capacity: script.capacity } })],
    });
    const input = { messages: [new HumanMessage(TASK)] };
    const config = { recursionLimit: 4 * script.steps + 10 };
    let last: BaseMessage[] = [];
    if (mode === 'invoke') last = (await agent.invoke(input, config)).messages;
    else
      for await (const state of await agent.stream(input, { ...config, streamMode: 'values' }))
        last = (state as { messages: BaseMessage[] }).messages;
    return textsOf(last.at(-1)?.content).join('');
  };
}

// ---- OpenAI Agents SDK: run() with the SDK's OpenAI Responses model against a fake server -------

/** A Responses request body as it went over the wire, in plain pieces. */
export function seenResponsesWire(body: Record<string, unknown>): SeenPrompt {
  const seen: SeenPrompt = {
    system: typeof body.instructions === 'string' ? [body.instructions] : [],
    messages: [],
    tools: JSON.stringify(body.tools ?? []),
  };
  const items =
    typeof body.input === 'string'
      ? [{ role: 'user', content: body.input }]
      : (body.input as Array<Record<string, unknown>>);
  for (const i of items) {
    if (i.type === 'function_call')
      seen.messages.push({
        role: 'assistant',
        texts: [],
        calls: [{ id: String(i.call_id), name: String(i.name), arguments: String(i.arguments) }],
      });
    else if (i.type === 'function_call_output')
      seen.messages.push({ role: 'tool', texts: textsOf(i.output), calls: [], answers: String(i.call_id) });
    else if (i.type === 'reasoning')
      seen.messages.push({ role: 'assistant', texts: textsOf(i.summary), calls: [] });
    else
      seen.messages.push({
        role:
          i.role === 'system' || i.role === 'developer'
            ? 'system'
            : i.role === 'assistant'
              ? 'assistant'
              : 'user',
        texts: textsOf(i.content),
        calls: [],
      });
  }
  return seen;
}

function agentsLoop(mode: 'run' | 'stream'): LoopRunner {
  return async (script: LoopScript) => {
    let step = 0;
    const server = await startFakeResponses((body) => {
      script.seen(seenResponsesWire(body));
      const n = step++;
      if (n >= script.steps) return [{ type: 'message', text: FINAL_ANSWER }];
      const s = script.step(n);
      return [
        { type: 'message', text: s.thought },
        {
          type: 'function_call',
          callId: `call-${n}`,
          name: READ_FILE.name,
          arguments: JSON.stringify({ path: s.path }),
        },
      ];
    });
    try {
      const client = new OpenAI({ apiKey: 'sk-loop-test', baseURL: server.url, maxRetries: 0 });
      let reads = 0;
      const agent = new Agent({
        name: 'reviewer',
        instructions: SYSTEM,
        model: new OpenAIResponsesModel(client, 'gpt-4.1'),
        tools: [
          agentsTool({
            name: READ_FILE.name,
            description: READ_FILE.description,
            parameters: readFileInput,
            execute: () => script.read(reads++),
          }),
        ],
      });
      const options = {
        callModelInputFilter: compactorInputFilter({ limits: { capacity: script.capacity } }),
        maxTurns: script.steps + 5,
      };
      const input: AgentInputItem[] = [{ role: 'user', content: TASK }];
      if (mode === 'run') return String((await run(agent, input, options)).finalOutput ?? '');
      const result = await run(agent, input, { ...options, stream: true });
      for await (const _event of result) void _event;
      await result.completed;
      if (result.error) throw result.error;
      return String(result.finalOutput ?? '');
    } finally {
      await server.close();
    }
  };
}

/** The runner of each framework and mode. */
export function loopRunner(kind: LoopKind): LoopRunner {
  switch (kind.mode) {
    case 'generateText':
      return aiSdkLoop('generate');
    case 'streamText':
      return aiSdkLoop('stream');
    case 'invoke':
      return langchainLoop('invoke');
    case 'stream':
      return langchainLoop('stream');
    case 'run':
      return agentsLoop('run');
    case 'run stream':
      return agentsLoop('stream');
  }
}
