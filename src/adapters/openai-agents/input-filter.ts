import type { CallModelInputFilter, CallModelInputFilterArgs, Model, ModelInputData } from '@openai/agents';
import { parseOptions } from '../../core/parse-options.js';
import type { SummaryClient } from '../../providers/types.js';
import { SessionOptionsSchema, type CompactorSessionOptions } from '../../session/index.js';
import { createConversations, type Conversations } from '../shared/conversations.js';
import { fromAgentInputItems, toAgentInputItems } from './convert.js';
import { agentsSummarizer } from './summarizer.js';

/** Options of {@link compactorInputFilter}: `createCompactorSession`'s, plus a summarizer model and a conversation id. */
export interface CompactorInputFilterOptions extends Omit<CompactorSessionOptions, 'summarizer' | 'history'> {
  /** Who writes summaries: any Agents SDK `Model` (`{ model }`) or a summary client; default the offline summarizer. */
  summarizer?: { model: Model; modelName?: string } | SummaryClient;
  /**
   * Names the conversation of a model call: a fixed id, or a function of the filter's
   * arguments (e.g. from your run context); default: derived from the first input item.
   */
  conversationId?: string | ((args: CallModelInputFilterArgs) => string | undefined);
}

/** The filter, with the per-conversation state it keeps. */
export type CompactorInputFilter = CallModelInputFilter & {
  /** Per-conversation sessions (history, budgets, cache health), by conversation id. */
  readonly conversations: Conversations;
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

/**
 * A `callModelInputFilter` for the OpenAI Agents SDK's `run()` (`run(agent, input, {
 * callModelInputFilter: compactorInputFilter(options) })`): every model call receives
 * projected input items — pairing repaired, old tool results cleared, the conversation
 * compacted when it nears the window, reasoning items kept with the items that follow them.
 * The run's own history and the caller's input are never changed; instructions pass through.
 *
 * A conversation is named by the `conversationId` option, else by its first input item; its
 * state lives in memory, or under `sessionDir/<id>` when `sessionDir` is given.
 */
export function compactorInputFilter(options: CompactorInputFilterOptions = {}): CompactorInputFilter {
  const { summarizer, conversationId, ...rest } = options;
  parseOptions(SessionOptionsSchema, rest, 'compactorInputFilter: options');
  const client = summaryClientOf(summarizer);
  const conversations = createConversations({ ...rest, ...(client ? { summarizer: client } : {}) });
  const filter = async (args: CallModelInputFilterArgs): Promise<ModelInputData> => {
    const { modelData, agent } = args;
    const id = typeof conversationId === 'function' ? conversationId(args) : conversationId;
    const projection = await conversations.project({
      ...(id !== undefined ? { conversationId: id } : {}),
      ...(modelData.instructions ? { system: modelData.instructions } : {}),
      tools: toolsOf(agent),
      messages: fromAgentInputItems(modelData.input),
      ...(typeof agent.model === 'string' && agent.model !== '' ? { model: { id: agent.model } } : {}),
    });
    return { ...modelData, input: toAgentInputItems(projection.messages) };
  };
  return Object.assign(filter, { conversations });
}
