import { z } from 'zod';
import { textOf, type Json, type Message } from '../messages/message.js';
import type { ToolSchema } from '../providers/index.js';

/**
 * S2: the frozen parent envelope (system prompt + ordered tool catalog) of a provider
 * request file, reused by compaction requests only when the file's provider family and
 * model match the route. Transcripts and other routes get no parent context.
 */

/** The envelope parts a compaction request may reuse. */
export interface ParentEnvelope {
  system?: string;
  tools?: ToolSchema[];
  /** The file's top-level request fields (cache keys, service tier, thinking …), forwarded (O1). */
  requestFields?: Record<string, Json>;
}

// Tool list shapes of the three provider request formats (validated, extra fields ignored).
const ChatTools = z.array(
  z.object({
    type: z.literal('function'),
    function: z.object({
      name: z.string().min(1),
      description: z.string().optional(),
      parameters: z.unknown().optional(),
    }),
  }),
);
const ResponsesTools = z.array(
  z.object({
    type: z.literal('function'),
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.unknown().optional(),
  }),
);
const AnthropicTools = z.array(
  z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    input_schema: z.unknown().optional(),
  }),
);

const ProviderMeta = z.object({
  format: z.string(),
  envelope: z.record(z.string(), z.unknown()).optional(),
});

/** Which input format belongs to which route wire (`offline` has none). */
const FORMAT_OF_WIRE: Record<string, string> = {
  chat: 'openai-chat',
  responses: 'openai-responses',
  messages: 'anthropic',
};

function toolsOf(format: string, raw: unknown): ToolSchema[] | undefined {
  const strip = <T extends { description?: string }>(t: T) =>
    t.description === undefined ? {} : { description: t.description };
  if (format === 'openai-chat') {
    const r = ChatTools.safeParse(raw);
    return r.success
      ? r.data.map((t) => ({
          name: t.function.name,
          ...strip(t.function),
          parameters: t.function.parameters,
        }))
      : undefined;
  }
  if (format === 'openai-responses') {
    const r = ResponsesTools.safeParse(raw);
    return r.success
      ? r.data.map((t) => ({ name: t.name, ...strip(t), parameters: t.parameters }))
      : undefined;
  }
  const r = AnthropicTools.safeParse(raw);
  return r.success
    ? r.data.map((t) => ({ name: t.name, ...strip(t), parameters: t.input_schema }))
    : undefined;
}

/**
 * The envelope of `session` when its source request used the route's wire and model (S2);
 * otherwise an empty envelope. The system prompt is the session's leading system text.
 */
export function parentEnvelope(
  meta: Record<string, unknown>,
  messages: readonly Message[],
  route: { wire: string | null; model: string },
): ParentEnvelope {
  const parsed = ProviderMeta.safeParse(meta.provider);
  if (!parsed.success || route.wire === null) return {};
  const { format, envelope } = parsed.data;
  if (format !== FORMAT_OF_WIRE[route.wire] || envelope === undefined) return {};
  // O1: the request's own cache/tier fields belong to the provider, whatever the model.
  const requestFields = envelope as Record<string, Json>;
  if (envelope.model !== route.model) return { requestFields };
  const system: string[] = [];
  for (const m of messages) {
    if (m.role !== 'system') break;
    system.push(textOf(m.content));
  }
  const tools = envelope.tools === undefined ? undefined : toolsOf(format, envelope.tools);
  return {
    ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
    ...(tools && tools.length > 0 ? { tools } : {}),
    requestFields,
  };
}
