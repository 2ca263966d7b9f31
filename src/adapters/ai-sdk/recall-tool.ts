import type { Tool } from 'ai';
import { RECALL_TOOL } from '../../projection/recall.js';
import type { Conversations } from '../shared/conversations.js';
import { loadPeer } from '../shared/peer.js';

const ai = await loadPeer(() => import('ai'), 'ai', 'ai-sdk');

/** What a recall call asks for. */
type RecallInput = { id: string; range?: { start: number; end: number } };

/** The recall tool as an AI SDK tool, answered from the middleware's conversations. */
export function aiSdkRecallTool(conversations: Conversations): Tool<RecallInput, string> {
  return ai.tool({
    description: RECALL_TOOL.description,
    inputSchema: ai.jsonSchema<RecallInput>(RECALL_TOOL.parameters as Parameters<typeof ai.jsonSchema>[0]),
    execute: async (input: RecallInput) => conversations.recall(input),
  });
}
