/**
 * Loops that need the past, one per framework: the model (dev/fakes/recall-model.ts) reads
 * `files` files, then must answer with the marker at the top of the first one, cleared by
 * then, and may call the adapter's recall tool. Each loop reports its final answer, the tool
 * lists the model was sent (they must never change) and the recall calls it made.
 */
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { Agent, OpenAIResponsesModel, run, tool as agentsTool, type AgentInputItem } from '@openai/agents';
import { generateText, jsonSchema, stepCountIs, tool as aiTool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createAgent, tool as langchainTool } from 'langchain';
import OpenAI from 'openai';
import { z } from 'zod';
import { compactorMiddleware as aiSdkMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { compactorMiddleware as langchainMiddleware } from '../../src/adapters/langchain/index.js';
import { compactorInputFilter } from '../../src/adapters/openai-agents/index.js';
import { recallFile, recallStep, type RecallStep } from '../fakes/recall-model.js';
import { READ_FILE, SYSTEM } from './loop-matrix.js';
import { seenAiSdk, seenLangChain, seenResponsesWire } from './framework-loops.js';
import { startFakeResponses } from './fake-responses.js';
import type { SeenPrompt } from './prompt-audit.js';

/** One loop: its window, how many files and how large each is. */
export interface RecallLoopCell {
  window: number;
  files: number;
  fileTokens: number;
}

/** What a loop ended with. */
export interface RecallLoopOutcome {
  final: string;
  /** The tool list of every model call, as the model got it. */
  toolLists: string[];
  /** Recall calls the model made. */
  recalls: number;
  modelCalls: number;
}

export type RecallFramework = 'ai-sdk' | 'langchain' | 'openai-agents';

const TASK =
  'Read src/file-0.ts and the files after it one by one, then tell me the marker at the top of the first.';
const usage = {
  inputTokens: { total: 1_000, noCache: 1_000, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 20, text: 20, reasoning: 0 },
};
const readInput = z.object({ path: z.string() });
const fileOf = (path: string) => Number(/file-(\d+)/.exec(path)?.[1] ?? 0);
/** The adapter's settings: the window, and clearing on (the model must meet cleared results). */
const settings = (cell: RecallLoopCell) => ({ preset: 'vtcode' as const, limits: { capacity: cell.window } });

/** Notes a prompt and returns the model's next step. */
function observe(cell: RecallLoopCell, out: RecallLoopOutcome, seen: SeenPrompt): RecallStep {
  out.modelCalls++;
  out.toolLists.push(seen.tools);
  const step = recallStep(seen, cell.files);
  if (step.kind === 'recall') out.recalls++;
  return step;
}

const fresh = (): RecallLoopOutcome => ({ final: '', toolLists: [], recalls: 0, modelCalls: 0 });
const argsOf = (step: RecallStep) =>
  step.kind === 'read' ? { path: `src/file-${step.n}.ts` } : step.kind === 'recall' ? { id: step.id } : {};
const nameOf = (step: RecallStep) => (step.kind === 'read' ? READ_FILE.name : 'recall');

async function aiSdkLoop(cell: RecallLoopCell): Promise<RecallLoopOutcome> {
  const out = fresh();
  const middleware = aiSdkMiddleware(settings(cell));
  const model = new MockLanguageModelV4({
    provider: 'test',
    modelId: 'recall-model',
    doGenerate: async ({ prompt, tools }) => {
      const step = observe(cell, out, seenAiSdk(prompt, tools));
      const content =
        step.kind === 'answer'
          ? [{ type: 'text' as const, text: step.text }]
          : [
              {
                type: 'tool-call' as const,
                toolCallId: `call-${out.modelCalls}`,
                toolName: nameOf(step),
                input: JSON.stringify(argsOf(step)),
              },
            ];
      const finish = step.kind === 'answer' ? 'stop' : 'tool-calls';
      return { content, finishReason: { unified: finish, raw: finish }, usage, warnings: [] };
    },
  });
  const result = await generateText({
    model: wrapLanguageModel({ model, middleware }),
    system: SYSTEM,
    messages: [{ role: 'user', content: TASK }],
    tools: {
      [READ_FILE.name]: aiTool({
        description: READ_FILE.description,
        inputSchema: jsonSchema<{ path: string }>(READ_FILE.parameters),
        execute: async ({ path }) => recallFile(fileOf(path), cell.fileTokens),
      }),
      recall: middleware.recallTool!,
    },
    stopWhen: stepCountIs(cell.files + 6),
  });
  return { ...out, final: result.text };
}

async function langchainLoop(cell: RecallLoopCell): Promise<RecallLoopOutcome> {
  const out = fresh();
  const readFile = langchainTool(({ path }) => recallFile(fileOf(path), cell.fileTokens), {
    name: READ_FILE.name,
    description: READ_FILE.description,
    schema: readInput,
  });
  const middleware = langchainMiddleware(settings(cell));
  const model = fakeModel();
  for (let n = 0; n < cell.files + 6; n++)
    model.respond((messages: BaseMessage[]) => {
      const tools = JSON.stringify(
        [readFile, ...(middleware.tools ?? [])].map((t) => convertToOpenAITool(t as never)),
      );
      const step = observe(cell, out, seenLangChain(messages, tools));
      if (step.kind === 'answer') return new AIMessage(step.text);
      return new AIMessage({
        content: '',
        tool_calls: [{ id: `call-${n}`, name: nameOf(step), args: argsOf(step) }],
      });
    });
  const agent = createAgent({ model, tools: [readFile], systemPrompt: SYSTEM, middleware: [middleware] });
  const state = await agent.invoke(
    { messages: [new HumanMessage(TASK)] },
    { recursionLimit: 4 * cell.files + 30 },
  );
  const last = state.messages.at(-1);
  return { ...out, final: typeof last?.content === 'string' ? last.content : '' };
}

async function agentsLoop(cell: RecallLoopCell): Promise<RecallLoopOutcome> {
  const out = fresh();
  const server = await startFakeResponses((body) => {
    const step = observe(cell, out, seenResponsesWire(body));
    if (step.kind === 'answer') return [{ type: 'message', text: step.text }];
    return [
      {
        type: 'function_call',
        callId: `call-${out.modelCalls}`,
        name: nameOf(step),
        arguments: JSON.stringify(argsOf(step)),
      },
    ];
  });
  try {
    const client = new OpenAI({ apiKey: 'sk-loop-test', baseURL: server.url, maxRetries: 0 });
    const filter = compactorInputFilter(settings(cell));
    const agent = new Agent({
      name: 'reader',
      instructions: SYSTEM,
      model: new OpenAIResponsesModel(client, 'gpt-4.1'),
      tools: [
        agentsTool({
          name: READ_FILE.name,
          description: READ_FILE.description,
          parameters: readInput,
          execute: ({ path }) => recallFile(fileOf(path), cell.fileTokens),
        }),
        filter.recallTool!,
      ],
    });
    const input: AgentInputItem[] = [{ role: 'user', content: TASK }];
    const result = await run(agent, input, { callModelInputFilter: filter, maxTurns: cell.files + 6 });
    return { ...out, final: String(result.finalOutput ?? '') };
  } finally {
    await server.close();
  }
}

/** The loop of a framework. */
export function recallLoop(framework: RecallFramework): (cell: RecallLoopCell) => Promise<RecallLoopOutcome> {
  if (framework === 'ai-sdk') return aiSdkLoop;
  return framework === 'langchain' ? langchainLoop : agentsLoop;
}
