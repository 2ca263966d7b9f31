import { z } from 'zod';
import { RecordSchema, type Content, type Json, type Message } from '../messages/message.js';
import { placeOf, validate } from './input-error.js';
import { parseJson, type SessionText } from './json-text.js';
import { isObj } from './detect.js';
import type { ImportResult, SessionFormat } from './types.js';

/** SWE-agent `.traj`: `history` is imported; `trajectory[].messages` snapshots are not. */
const HistoryEntrySchema = z.looseObject({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))]),
  action: z.string().nullish(),
  tool_calls: z
    .array(
      z.looseObject({
        id: z.string(),
        function: z.looseObject({
          name: z.string(),
          arguments: z.union([z.string(), RecordSchema]),
        }),
      }),
    )
    .nullish(),
  tool_call_ids: z.array(z.string()).nullish(),
});
const TrajSchema = z.looseObject({
  history: z.array(HistoryEntrySchema),
  trajectory: z.array(z.unknown()).optional(),
  info: RecordSchema.optional(),
  environment: z.unknown().optional(),
});

function contentOf(c: z.infer<typeof HistoryEntrySchema>['content']): Content {
  if (typeof c === 'string') return c;
  return c.map((p) => ({ type: 'text' as const, text: p.text ?? '' }));
}

/** The tool name of a classic text action: its first word (`edit`, `open`, `python3` …). */
export function actionToolName(action: string): string {
  const word = action.trim().split(/\s+/, 1)[0] ?? '';
  return /^[\w.-]{1,40}$/.test(word) ? word : 'bash';
}

/**
 * Imports a SWE-agent trajectory. v1 function calling keeps its call ids; v0 classic text
 * actions get synthetic ids `swe-<n>` and pair with the next user message (the observation).
 */
export function importSweAgent(text: SessionText, fileName?: string): ImportResult {
  const where = placeOf(fileName);
  const doc = validate(TrajSchema, parseJson(text, fileName), where);
  const messages: Message[] = [];
  let pendingClassic: string | undefined;
  let n = 0;
  doc.history.forEach((h, i) => {
    const content = contentOf(h.content);
    const metadata: Record<string, Json> = {
      sweAgent: { index: i, ...(h.agent ? { agent: h.agent as Json } : {}) },
    };
    if (h.role === 'assistant') {
      pendingClassic = undefined;
      if (h.tool_calls && h.tool_calls.length > 0) {
        const calls = h.tool_calls.map((c) => ({
          id: c.id,
          name: c.function.name,
          arguments:
            typeof c.function.arguments === 'string'
              ? c.function.arguments
              : JSON.stringify(c.function.arguments),
        }));
        messages.push({ role: 'assistant', content, toolCalls: calls, metadata });
      } else if (h.action && h.action.trim() !== '') {
        const id = `swe-${++n}`;
        pendingClassic = id;
        const call = { id, name: actionToolName(h.action), arguments: JSON.stringify({ command: h.action }) };
        messages.push({ role: 'assistant', content, toolCalls: [call], metadata });
      } else messages.push({ role: 'assistant', content, metadata });
    } else if (h.role === 'tool') {
      const id = h.tool_call_ids?.[0] ?? '';
      messages.push({ role: 'tool', content, toolCallId: id, metadata });
    } else if (h.role === 'user' && pendingClassic !== undefined) {
      messages.push({ role: 'tool', content, toolCallId: pendingClassic, metadata });
      pendingClassic = undefined;
    } else messages.push({ role: h.role, content, metadata });
  });
  const info = doc.info ?? {};
  const meta: Record<string, unknown> = {
    exitStatus: info.exit_status,
    modelStats: info.model_stats,
    trajectorySteps: doc.trajectory?.length ?? 0,
  };
  return {
    format: 'swe-agent',
    file: fileName,
    sessions: [{ id: sessionIdFrom(fileName, 'swe-agent'), messages, meta }],
  };
}

/** A session id from the file name (`pydicom__pydicom-1458`), or a fallback. */
export function sessionIdFrom(fileName: string | undefined, fallback: string): string {
  if (!fileName) return fallback;
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  return base.replace(/\.(traj\.json|traj|jsonl|json|md)$/i, '') || fallback;
}

/** SWE-agent trajectories: a `history` with a `trajectory` or an `environment`. */
export const sweAgentFormat: SessionFormat<'swe-agent'> = {
  name: 'swe-agent',
  detect: [
    {
      kind: 'document',
      order: 30,
      test: (doc) =>
        isObj(doc) && Array.isArray(doc.history) && (Array.isArray(doc.trajectory) || 'environment' in doc),
    },
  ],
  import: importSweAgent,
  importDocument: importSweAgent,
};
