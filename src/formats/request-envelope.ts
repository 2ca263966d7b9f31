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

// Function tool shapes of the three provider request formats (validated, extra fields ignored).
const ChatFunction = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.unknown().optional(),
  }),
});
const ResponsesFunction = z.object({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().optional(),
  parameters: z.unknown().optional(),
});
// An Anthropic tool without a `type` (or `custom`) is a client tool; any other type is the
// provider's own (web search, text editor, bash …).
const AnthropicFunction = z.object({
  type: z.literal('custom').optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.unknown().optional(),
});

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

/** The function tool a list element is on `wire`, or undefined when it is something else. */
function functionTool(wire: FileRequestEnvelope['wire'], raw: unknown): ToolSchema | undefined {
  if (wire === 'chat') {
    const r = ChatFunction.safeParse(raw);
    if (!r.success) return undefined;
    const f = r.data.function;
    return { name: f.name, ...described(f.description), parameters: f.parameters };
  }
  if (wire === 'responses') {
    const r = ResponsesFunction.safeParse(raw);
    return r.success
      ? { name: r.data.name, ...described(r.data.description), parameters: r.data.parameters }
      : undefined;
  }
  const r = AnthropicFunction.safeParse(raw);
  return r.success
    ? { name: r.data.name, ...described(r.data.description), parameters: r.data.input_schema }
    : undefined;
}

const isObject = (v: Json | undefined): v is { [key: string]: Json } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a provider tool is called: its own name (Chat nests it under the type), else its type. */
function nativeName(raw: Json): string {
  if (!isObject(raw)) return 'tool';
  const nested = typeof raw.type === 'string' ? raw[raw.type] : undefined;
  const named = [raw.name, isObject(nested) ? nested.name : undefined, raw.type].find(
    (v): v is string => typeof v === 'string' && v !== '',
  );
  return named ?? 'tool';
}

/**
 * A request's tools, element by element: function tools as schemas, and every other tool
 * (web search, a custom grammar tool, a namespace …) kept whole, so it still counts toward
 * the fixed prefix and is never rewritten as a function.
 */
function toolsOf(wire: FileRequestEnvelope['wire'], raw: unknown): ToolSchema[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  return (raw as Json[]).map(
    (t) => functionTool(wire, t) ?? { name: nativeName(t), native: { wire, tool: t } },
  );
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
