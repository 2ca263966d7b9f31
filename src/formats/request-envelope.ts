import { z } from 'zod';
import { textOf, type Json } from '../messages/message.js';
import type { ToolSchema } from '../providers/types.js';
import type { ImportedSession } from './types.js';

/**
 * What a provider request file says about the request it was: the wire protocol it was
 * written in, its model, its system prompt (the file's leading system messages) and its
 * ordered tool catalog, and its top-level request fields (cache key, service tier, thinking …)
 * to forward. Transcripts carry no envelope.
 */
export interface FileRequestEnvelope {
  wire: 'chat' | 'responses' | 'messages';
  model: string;
  system?: string;
  tools?: ToolSchema[];
  /** Every top-level field of the request (each endpoint takes the ones its API accepts). */
  requestFields: Record<string, Json>;
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
  envelope: z
    .object({ model: z.string().min(1), tools: z.unknown().optional() })
    .loose()
    .optional(),
});

/** Which request format was written for which wire protocol. */
const WIRE_OF_FORMAT: Record<string, FileRequestEnvelope['wire']> = {
  'openai-chat': 'chat',
  'openai-responses': 'responses',
  anthropic: 'messages',
};

const described = (d: string | undefined) => (d === undefined ? {} : { description: d });

function toolsOf(wire: FileRequestEnvelope['wire'], raw: unknown): ToolSchema[] | undefined {
  if (wire === 'chat') {
    const r = ChatTools.safeParse(raw);
    return r.success
      ? r.data.map(({ function: f }) => ({
          name: f.name,
          ...described(f.description),
          parameters: f.parameters,
        }))
      : undefined;
  }
  if (wire === 'responses') {
    const r = ResponsesTools.safeParse(raw);
    return r.success
      ? r.data.map((t) => ({ name: t.name, ...described(t.description), parameters: t.parameters }))
      : undefined;
  }
  const r = AnthropicTools.safeParse(raw);
  return r.success
    ? r.data.map((t) => ({ name: t.name, ...described(t.description), parameters: t.input_schema }))
    : undefined;
}

/** The request envelope of an imported provider request file, or undefined for anything else. */
export function requestEnvelopeOf(
  session: Pick<ImportedSession, 'meta' | 'messages'>,
): FileRequestEnvelope | undefined {
  const parsed = ProviderMeta.safeParse(session.meta.provider);
  if (!parsed.success || parsed.data.envelope === undefined) return undefined;
  const wire = WIRE_OF_FORMAT[parsed.data.format];
  if (wire === undefined) return undefined;
  const requestFields = parsed.data.envelope as Record<string, Json>;
  const { model, tools: raw } = parsed.data.envelope;
  const tools = raw === undefined ? undefined : toolsOf(wire, raw);
  const system: string[] = [];
  for (const m of session.messages) {
    if (m.role !== 'system') break;
    system.push(textOf(m.content));
  }
  return {
    wire,
    model,
    ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
    ...(tools && tools.length > 0 ? { tools } : {}),
    requestFields,
  };
}
