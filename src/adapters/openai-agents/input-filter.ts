import type {
  CallModelInputFilter,
  CallModelInputFilterArgs,
  FunctionTool,
  Model,
  ModelInputData,
} from '@openai/agents';
import type { SummaryClient } from '../../providers/types.js';
import type { CompactorSessionOptions } from '../../session/index.js';
import {
  createConversations,
  parseAdapterOptions,
  type ConversationOptions,
  type ConversationProjection,
  type Conversations,
} from '../shared/conversations.js';
import { recordProviderUsage } from '../shared/usage.js';
import { fromAgentInputItems, toAgentInputItems } from './convert.js';
import { agentsSummarizer } from './summarizer.js';
import { agentsRecallTool } from './recall-tool.js';

/** Options of {@link compactorInputFilter}: `createCompactorSession`'s, plus a summarizer model and a conversation id. */
export interface CompactorInputFilterOptions
  extends Omit<CompactorSessionOptions, 'summarizer' | 'history'>, ConversationOptions {
  /** Who writes summaries: any Agents SDK `Model` (`{ model }`) or a summary client; default the offline summarizer. */
  summarizer?: { model: Model; modelName?: string } | SummaryClient;
  /**
   * Names the conversation of a model call: a fixed id, or a function of the filter's
   * arguments; default: the run context's `conversationId` when it has one, else derived from
   * the instructions and the first input item.
   */
  conversationId?: string | ((args: CallModelInputFilterArgs) => string | undefined);
}

/** The filter, with the per-conversation state it keeps. */
export type CompactorInputFilter = CallModelInputFilter & {
  /** Per-conversation sessions (history, budgets, cache health), by conversation id. */
  readonly conversations: Conversations;
  /**
   * The recall tool (absent with `recall: false`): add it to the agent's tools, so the model
   * can get back a cleared tool result by the id its stub names.
   */
  readonly recallTool?: FunctionTool;
};

function summaryClientOf(summarizer: CompactorInputFilterOptions['summarizer']): SummaryClient | undefined {
  if (summarizer === undefined) return undefined;
  return 'summarize' in summarizer ? summarizer : agentsSummarizer(summarizer.model, summarizer.modelName);
}

/** The agent's tools as envelope schemas (listed in the prefix, never compacted). */
function toolsOf(agent: CallModelInputFilterArgs['agent']) {
  return (agent.tools ?? []).map((t) => {
    const tool = t as { name?: unknown; description?: unknown; parameters?: unknown };
    return {
      name: typeof tool.name === 'string' ? tool.name : 'tool',
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      ...(tool.parameters !== undefined ? { parameters: tool.parameters } : {}),
    };
  });
}

/** The run's usage so far, as the SDK keeps it on its run context. */
interface RunUsage {
  requests?: number;
  inputTokens?: number;
  inputTokensDetails?: Array<Record<string, number>>;
  requestUsageEntries?: Array<{ inputTokens?: number; inputTokensDetails?: Record<string, number> }>;
}

const cachedOf = (details: readonly Record<string, number>[] | undefined): number =>
  (details ?? []).reduce((sum, d) => sum + (typeof d?.cached_tokens === 'number' ? d.cached_tokens : 0), 0);

/**
 * Records each model response's usage into the conversation its request came from. The filter
 * only sees the input, so the usage is read from the run's totals when the agent next acts on
 * a response (a tool call, or its final output): whatever the totals grew by since is that
 * response's. Requests are matched to their run by the run's context object (or the agent).
 */
function usageRecorder() {
  const pending = new WeakMap<object, ConversationProjection>();
  const seen = new WeakMap<
    object,
    { requests: number; inputTokens: number; cached: number; entries: number }
  >();
  const hooked = new WeakSet<object>();

  function flush(key: object, runContext: { usage?: RunUsage } | undefined): void {
    const usage = runContext?.usage;
    const call = pending.get(key);
    if (usage === undefined || runContext === undefined) return;
    const before = seen.get(runContext) ?? { requests: 0, inputTokens: 0, cached: 0, entries: 0 };
    const now = {
      requests: usage.requests ?? 0,
      inputTokens: usage.inputTokens ?? 0,
      cached: cachedOf(usage.inputTokensDetails),
      entries: usage.requestUsageEntries?.length ?? 0,
    };
    seen.set(runContext, now);
    if (call === undefined || now.requests <= before.requests) return;
    pending.delete(key);
    const entry = now.entries > before.entries ? usage.requestUsageEntries?.[now.entries - 1] : undefined;
    if (entry !== undefined)
      recordProviderUsage(call, entry.inputTokens, entry.inputTokensDetails?.cached_tokens);
    else recordProviderUsage(call, now.inputTokens - before.inputTokens, now.cached - before.cached);
  }

  return {
    /** Remembers the request a model call is about to send and listens to its agent once. */
    sent(args: CallModelInputFilterArgs, projection: ConversationProjection): void {
      const { agent, context } = args;
      pending.set(keyOf(context, agent), projection);
      if (hooked.has(agent)) return;
      hooked.add(agent);
      const on = (runContext: { context?: unknown; usage?: RunUsage }) =>
        flush(keyOf(runContext.context, agent), runContext);
      agent.on('agent_tool_start', on as never);
      agent.on('agent_end', on as never);
    },
  };
}

/** `conversationId` of the run's context (`run(agent, input, { context: { conversationId } })`), when it has one. */
function contextIdOf(context: unknown): string | undefined {
  const id = (context as { conversationId?: unknown } | null | undefined)?.conversationId;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** Which run a model call belongs to: the caller's context object when there is one, else the agent. */
const keyOf = (context: unknown, agent: object): object =>
  typeof context === 'object' && context !== null ? context : agent;

/**
 * A `callModelInputFilter` for the OpenAI Agents SDK's `run()` (`run(agent, input, {
 * callModelInputFilter: compactorInputFilter(options) })`): every model call receives
 * projected input items — pairing repaired, old tool results cleared, the conversation
 * compacted when it nears the window, reasoning items kept with the items that follow them.
 * The run's own history and the caller's input are never changed; instructions pass through.
 *
 * A conversation is named by the `conversationId` option, else by the run context's
 * `conversationId`, else by its instructions and first input item; its
 * state lives in memory, or under `sessionDir/<id>` when `sessionDir` is given.
 */
export function compactorInputFilter(options: CompactorInputFilterOptions = {}): CompactorInputFilter {
  const { summarizer, conversationId, ...rest } = options;
  parseAdapterOptions(rest, 'compactorInputFilter: options');
  const client = summaryClientOf(summarizer);
  const conversations = createConversations({ ...rest, ...(client ? { summarizer: client } : {}) });
  const usage = usageRecorder();
  const filter = async (args: CallModelInputFilterArgs): Promise<ModelInputData> => {
    const { modelData, agent } = args;
    const id =
      (typeof conversationId === 'function' ? conversationId(args) : conversationId) ??
      contextIdOf(args.context);
    const projection = await conversations.project({
      ...(id !== undefined ? { conversationId: id } : {}),
      ...(modelData.instructions ? { system: modelData.instructions } : {}),
      tools: toolsOf(agent),
      messages: fromAgentInputItems(modelData.input),
      ...(typeof agent.model === 'string' && agent.model !== '' ? { model: { id: agent.model } } : {}),
    });
    usage.sent(args, projection);
    return { ...modelData, input: toAgentInputItems(projection.request) };
  };
  const recall = rest.recall === false ? {} : { recallTool: agentsRecallTool(conversations) };
  return Object.assign(filter, { conversations, ...recall });
}
