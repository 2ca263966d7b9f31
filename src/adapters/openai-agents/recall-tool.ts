import type { FunctionTool } from '@openai/agents';
import { RECALL_TOOL, RECALL_TOOL_NAME } from '../../projection/index.js';
import type { Conversations } from '../shared/conversations.js';
import { loadPeer } from '../shared/peer.js';

const agents = await loadPeer(() => import('@openai/agents'), '@openai/agents', 'openai-agents');

/** The recall tool as an Agents SDK function tool, answered from the filter's conversations. */
export function agentsRecallTool(conversations: Conversations): FunctionTool {
  return agents.tool({
    name: RECALL_TOOL_NAME,
    description: RECALL_TOOL.description ?? '',
    parameters: RECALL_TOOL.parameters as never,
    strict: false,
    execute: (input: unknown) => conversations.recall(input),
  }) as FunctionTool;
}
