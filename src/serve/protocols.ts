import { z } from 'zod';
import { UserError } from '../core/errors.js';
import { importAnthropic, exportAnthropic } from '../formats/anthropic.js';
import { importOpenAIChat, exportOpenAIChat } from '../formats/openai-chat.js';
import { importOpenAIResponses, exportOpenAIResponses } from '../formats/openai-responses.js';
import { requestEnvelopeOf, type FileRequestEnvelope } from '../formats/request-envelope.js';
import type { ImportResult } from '../formats/types.js';
import { JsonDocument } from '../formats/json-text.js';
import { rememberRawNumbers } from '../formats/raw-numbers.js';
import type { Message } from '../messages/message.js';
import { userIdSession } from './agent-ids.js';
import {
  geminiCall,
  geminiErrorBody,
  isGeminiPath,
  parseGeminiRequest,
  writeGeminiRequest,
} from './gemini.js';

/** The request shapes the proxy compacts. */
export type ProtocolName = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini';

/** What a request says about its fixed part: the file envelope's fields, on any of the proxy's wires. */
export type RequestEnvelope = Omit<FileRequestEnvelope, 'wire'> & {
  wire: FileRequestEnvelope['wire'] | 'gemini';
};

/** A client's request, read into canonical messages that export back to the same JSON. */
export interface ParsedRequest {
  protocol: ProtocolName;
  model: string;
  stream: boolean;
  /** The output the client asks for (`max_tokens` and its cousins), reserved from the window. */
  maxOutput?: number;
  /** Leading system messages: the prompt's fixed part, sent as they came and never compacted. */
  prefix: Message[];
  /** The conversation after them: what the session keeps and projects. */
  messages: Message[];
  /** System text and tool schemas (for the fixed part's token count). */
  envelope: RequestEnvelope;
  /** What the importer kept of the document, so the export writes every other field back. */
  meta: Record<string, unknown>;
  /** A session id the client already sends (metadata.user_id, prompt_cache_key, user, safety_identifier). */
  clientSessionId?: string;
  /** Why the request cannot be compacted and goes upstream unchanged (e.g. it continues a stored response). */
  passthrough?: string;
}

const optionalString = z.string().optional();
const outputTokens = z.number().int().positive().optional();

const AnthropicRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(z.unknown()),
  max_tokens: z.number().int().positive(),
  stream: z.boolean().optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).nullish(),
});

const CountTokensRequest = AnthropicRequest.extend({ max_tokens: z.number().int().positive().optional() });

const ChatRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(z.unknown()).min(1),
  stream: z.boolean().nullish(),
  max_tokens: outputTokens.nullable(),
  max_completion_tokens: outputTokens.nullable(),
  user: optionalString,
  prompt_cache_key: optionalString,
  safety_identifier: optionalString,
});

const ResponsesRequest = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.unknown())]),
  instructions: z.string().nullish(),
  previous_response_id: z.string().nullish(),
  stream: z.boolean().nullish(),
  max_output_tokens: outputTokens.nullable(),
  user: optionalString,
  prompt_cache_key: optionalString,
  safety_identifier: optionalString,
});

const WHERE = 'request body';

/** Validates a parsed body, or throws one line naming the field and what is wrong with it. */
function check<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue.path.length > 0 ? issue.path.join('.') : '(body)';
  throw new UserError(`${field}: ${issue.message}`);
}

/** The first of the ids a client sends that names its session. */
const firstId = (...ids: (string | null | undefined)[]): string | undefined =>
  ids.find((v): v is string => typeof v === 'string' && v !== '');

/** Splits imported messages into the leading system messages and the conversation after them. */
function split(
  imported: ImportResult,
  model: string,
  wire: FileRequestEnvelope['wire'],
  extraSystem?: string,
) {
  const session = imported.sessions[0];
  let k = 0;
  while (k < session.messages.length && session.messages[k].role === 'system') k++;
  const found = requestEnvelopeOf(session);
  const system = [found?.system, extraSystem].filter((s): s is string => s !== undefined && s !== '');
  const envelope: FileRequestEnvelope = {
    wire,
    model,
    requestFields: {},
    ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
    ...(found?.tools ? { tools: found.tools } : {}),
  };
  return {
    prefix: session.messages.slice(0, k),
    messages: session.messages.slice(k),
    envelope,
    meta: session.meta,
  };
}

/** A request body parsed whole; not JSON is a one-line error. */
export function parseBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new UserError(`${WHERE} is not JSON (${(e as Error).message})`);
  }
}

/** The parsed body as the importers read it, with its exact number texts remembered: parsed once. */
function rememberedOnce(text: string, body: unknown): JsonDocument {
  rememberRawNumbers(text, body);
  return new JsonDocument(body);
}

/**
 * Reads a request body of `protocol`; malformed bodies throw a one-line {@link UserError}. A
 * token count (`countTokens`) is a Messages request without `max_tokens`. A Gemini request
 * names its model and method in `url`. `parsed` is the body when it was parsed already.
 */
export function parseRequest(
  protocol: ProtocolName,
  text: string,
  countTokens = false,
  url = '/',
  parsed?: unknown,
): ParsedRequest {
  if (protocol === 'gemini') return parseGeminiRequest(text, url, parsed);
  const body = parsed ?? parseBody(text);
  // A body parsed in slices already knows its exact number texts.
  const parsedOnce = (t: string, b: unknown) =>
    parsed === undefined ? rememberedOnce(t, b) : new JsonDocument(b);
  if (protocol === 'anthropic') {
    const b = check(countTokens ? CountTokensRequest : AnthropicRequest, body);
    return {
      protocol,
      model: b.model,
      stream: b.stream === true,
      maxOutput: b.max_tokens,
      clientSessionId: firstId(userIdSession(b.metadata?.user_id)),
      ...split(importAnthropic(parsedOnce(text, body), WHERE), b.model, 'messages'),
    };
  }
  if (protocol === 'openai-chat') {
    const b = check(ChatRequest, body);
    return {
      protocol,
      model: b.model,
      stream: b.stream === true,
      maxOutput: b.max_completion_tokens ?? b.max_tokens ?? undefined,
      clientSessionId: firstId(b.prompt_cache_key, b.user, b.safety_identifier),
      ...split(importOpenAIChat(parsedOnce(text, body), WHERE), b.model, 'chat'),
    };
  }
  const b = check(ResponsesRequest, body);
  // A bare string input is one user message; as an item list it imports like any other.
  const doc =
    typeof b.input === 'string'
      ? JSON.stringify({ ...b, input: [{ role: 'user', content: b.input }] })
      : parsedOnce(text, body);
  return {
    protocol,
    model: b.model,
    stream: b.stream === true,
    maxOutput: b.max_output_tokens ?? undefined,
    clientSessionId: firstId(b.prompt_cache_key, b.user, b.safety_identifier),
    ...(b.previous_response_id ? { passthrough: 'continues a stored response (previous_response_id)' } : {}),
    ...split(importOpenAIResponses(doc, WHERE), b.model, 'responses', b.instructions ?? undefined),
  };
}

/** The request body to send upstream: the fixed part, then the projected conversation. */
export function writeRequest(req: ParsedRequest, projected: readonly Message[]): string {
  const messages = [...req.prefix, ...projected];
  switch (req.protocol) {
    case 'anthropic':
      return exportAnthropic(messages, req.meta);
    case 'openai-chat':
      return exportOpenAIChat(messages, req.meta);
    case 'openai-responses':
      return exportOpenAIResponses(messages, req.meta);
    case 'gemini':
      return writeGeminiRequest(req, messages);
  }
}

/** An error body in the protocol's own shape. */
export function errorBody(protocol: ProtocolName, status: number, message: string): string {
  if (protocol === 'gemini') return geminiErrorBody(status, message);
  if (protocol === 'anthropic') {
    const type =
      status === 401
        ? 'authentication_error'
        : status === 413
          ? 'request_too_large'
          : status === 404
            ? 'not_found_error'
            : status >= 500
              ? 'api_error'
              : 'invalid_request_error';
    return JSON.stringify({ type: 'error', error: { type, message } });
  }
  const type =
    status === 401 ? 'authentication_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return JSON.stringify({ error: { message, type, param: null, code: null } });
}

/** The protocol of a compacting path, or undefined for every other path. */
export function protocolOfPath(method: string, path: string): ProtocolName | undefined {
  if (method !== 'POST') return undefined;
  if (path === '/v1/messages') return 'anthropic';
  if (path === '/v1/chat/completions') return 'openai-chat';
  if (path === '/v1/responses') return 'openai-responses';
  const gemini = geminiCall(path);
  if (gemini !== undefined && gemini.method !== 'countTokens') return 'gemini';
  return undefined;
}

/** Which error shape a path answers in (Anthropic's paths, Gemini's, else OpenAI's). */
export function errorProtocolOfPath(path: string): ProtocolName {
  if (isGeminiPath(path)) return 'gemini';
  return path.startsWith('/v1/messages') || path.startsWith('/v1/complete') ? 'anthropic' : 'openai-chat';
}
