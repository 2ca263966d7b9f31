import { RECALL_TOOL, RECALL_TOOL_NAME } from '../../projection/index.js';
import type { Conversations } from '../shared/conversations.js';
import { agents } from './peers.js';

/** The recall tool as a LangChain tool, answered from the middleware's conversations. */
export function langchainRecallTool(conversations: Conversations) {
  return agents.tool((input: unknown) => conversations.recall(input), {
    name: RECALL_TOOL_NAME,
    description: RECALL_TOOL.description ?? '',
    schema: RECALL_TOOL.parameters as Record<string, unknown>,
  });
}
