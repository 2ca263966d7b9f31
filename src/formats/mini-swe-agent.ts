import { z } from 'zod';
import { RecordSchema, type Message } from '../messages/message.js';
import { placeOf, validate } from './input-error.js';
import { parseJson, type SessionText } from './json-text.js';
import { sessionIdFrom } from './swe-agent.js';
import { isObj } from './detect.js';
import type { ImportResult, SessionFormat } from './types.js';

/** mini-swe-agent `.traj.json` (`trajectory_format: mini-swe-agent-1`). */
const MiniTrajSchema = z.looseObject({
  trajectory_format: z.string().optional(),
  instance_id: z.string().optional(),
  info: RecordSchema.optional(),
  messages: z.array(
    z.looseObject({
      role: z.enum(['system', 'user', 'assistant', 'tool']),
      content: z.string(),
    }),
  ),
});

// The agent runs an action only when the reply holds exactly one ```bash block (its own rule).
const BASH_BLOCK = /```bash\s*\n([\s\S]*?)\n```/g;

/** The single bash action of an assistant reply, or undefined (a format error the agent rejects). */
export function miniAction(content: string): string | undefined {
  const blocks = [...content.matchAll(BASH_BLOCK)];
  return blocks.length === 1 ? blocks[0][1].trim() : undefined;
}

/**
 * Imports a mini-swe-agent trajectory: each assistant reply with exactly one bash block
 * becomes a `bash` call (`mini-<n>`), answered by the next user message (the output).
 */
export function importMiniSweAgent(text: SessionText, fileName?: string): ImportResult {
  const doc = validate(MiniTrajSchema, parseJson(text, fileName), placeOf(fileName));
  const messages: Message[] = [];
  let pending: string | undefined;
  let n = 0;
  for (const m of doc.messages) {
    if (m.role === 'assistant') {
      const action = miniAction(m.content);
      pending = undefined;
      if (action !== undefined) {
        pending = `mini-${++n}`;
        messages.push({
          role: 'assistant',
          content: m.content,
          toolCalls: [{ id: pending, name: 'bash', arguments: JSON.stringify({ command: action }) }],
        });
      } else messages.push({ role: 'assistant', content: m.content });
    } else if (m.role === 'user' && pending !== undefined) {
      const rc = /^<returncode>(-?\d+)<\/returncode>/.exec(m.content);
      messages.push({
        role: 'tool',
        content: m.content,
        toolCallId: pending,
        toolName: 'bash',
        ...(rc ? { metadata: { exitCode: Number(rc[1]) } } : {}),
      });
      pending = undefined;
    } else messages.push({ role: m.role, content: m.content });
  }
  const info = doc.info ?? {};
  const config = (info.config ?? {}) as { model?: { model_name?: unknown } };
  const meta = {
    instanceId: doc.instance_id,
    exitStatus: info.exit_status,
    miniVersion: info.mini_version,
    model: config.model?.model_name,
    modelStats: info.model_stats,
  };
  return {
    format: 'mini-swe-agent',
    file: fileName,
    sessions: [{ id: doc.instance_id ?? sessionIdFrom(fileName, 'mini-swe-agent'), messages, meta }],
  };
}

/** mini-swe-agent trajectories: named by `trajectory_format`, or `info` beside messages with `extra`. */
export const miniSweAgentFormat: SessionFormat<'mini-swe-agent'> = {
  name: 'mini-swe-agent',
  detect: [
    {
      kind: 'document',
      order: 20,
      test: (doc) =>
        isObj(doc) &&
        typeof doc.trajectory_format === 'string' &&
        doc.trajectory_format.startsWith('mini-swe-agent'),
    },
    {
      kind: 'document',
      order: 50,
      test: (doc) =>
        isObj(doc) &&
        Array.isArray(doc.messages) &&
        'info' in doc &&
        doc.messages.some((m) => isObj(m) && 'extra' in m),
    },
  ],
  import: importMiniSweAgent,
  importDocument: importMiniSweAgent,
};
