import { z } from 'zod';
import { UserError } from '../core/errors.js';
import { exportGemini, importGemini } from '../formats/gemini.js';
import type { FileRequestEnvelope } from '../formats/request-envelope.js';
import type { Json, Message } from '../messages/message.js';
import type { ToolSchema } from '../providers/types.js';
import { parseBody, type ParsedRequest } from './protocols.js';
import { JsonDocument } from '../formats/json-text.js';
import { rememberRawNumbers } from '../formats/raw-numbers.js';

/**
 * The Gemini API as the proxy serves it: `POST /v1beta/models/<model>:generateContent`,
 * `:streamGenerateContent` (SSE with `alt=sse`, else one JSON array) and `:countTokens` (also
 * under `/v1/` and `/v1alpha/`). The model is named in the path, the key in `x-goog-api-key`
 * or `?key=`; both go upstream as they came.
 */

/** The path of a Gemini model call: its API version, model and method. */
const CALL_PATH =
  /^\/(v1beta|v1alpha|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

/** A Gemini model call named by a path. */
export interface GeminiCall {
  model: string;
  method: 'generateContent' | 'streamGenerateContent' | 'countTokens';
}

/** The Gemini call a path names, or undefined. */
export function geminiCall(path: string): GeminiCall | undefined {
  const m = CALL_PATH.exec(path);
  if (!m) return undefined;
  let model: string;
  try {
    model = decodeURIComponent(m[2]);
  } catch {
    return undefined;
  }
  return { model, method: m[3] as GeminiCall['method'] };
}

/** Whether a path belongs to the Gemini API (its versions' roots, uploads, or a model call). */
export function isGeminiPath(path: string): boolean {
  return /^\/(upload\/)?(v1beta|v1alpha)(\/|$)/.test(path) || CALL_PATH.test(path);
}

const Tool = z.looseObject({
  functionDeclarations: z
    .array(
      z.looseObject({
        name: z.string().min(1),
        description: z.string().optional(),
        parameters: z.unknown().optional(),
        parametersJsonSchema: z.unknown().optional(),
      }),
    )
    .optional(),
});
const Instruction = z.union([
  z.string(),
  z.looseObject({ parts: z.array(z.looseObject({ text: z.string().optional() })).optional() }),
]);
const GenerateRequest = z.looseObject({
  contents: z.array(z.unknown()),
  systemInstruction: Instruction.optional(),
  tools: z.array(Tool).optional(),
  generationConfig: z.looseObject({ maxOutputTokens: z.number().int().positive().optional() }).optional(),
});
const CountRequest = z.looseObject({
  contents: z.array(z.unknown()).optional(),
  generateContentRequest: z.looseObject({ contents: z.array(z.unknown()) }).optional(),
});

function check<T>(schema: z.ZodType<T>, body: unknown, base = ''): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = [base, ...issue.path.map(String)].filter((s) => s !== '').join('.') || '(body)';
  throw new UserError(`${field}: ${issue.message}`);
}

/** The system instruction's text (for the fixed part's count). */
function instructionText(i: z.infer<typeof Instruction> | undefined): string | undefined {
  if (i === undefined) return undefined;
  if (typeof i === 'string') return i;
  const text = (i.parts ?? []).map((p) => p.text ?? '').join('\n');
  return text === '' ? undefined : text;
}

/** The function declarations as tool schemas; other tools (search, code execution) are small and ride along. */
function toolsOf(tools: z.infer<typeof Tool>[] | undefined): ToolSchema[] | undefined {
  const out: ToolSchema[] = [];
  for (const t of tools ?? [])
    for (const d of t.functionDeclarations ?? [])
      out.push({
        name: d.name,
        ...(d.description !== undefined ? { description: d.description } : {}),
        parameters: d.parameters ?? d.parametersJsonSchema,
      });
  return out.length > 0 ? out : undefined;
}

const WHERE = 'request body';

/**
 * Reads a Gemini request of `path` (`url` with its query). A `countTokens` body may wrap the
 * request in `generateContentRequest`; the wrapper is kept and written back around it.
 */
export function parseGeminiRequest(text: string, url: string, parsed?: unknown): ParsedRequest {
  const { pathname, searchParams } = new URL(url, 'http://proxy');
  const call = geminiCall(pathname);
  if (call === undefined) throw new UserError(`${pathname}: not a Gemini model call`);
  const body = parsed ?? parseBody(text);
  // Parsed once: the importer reads the same value, with its exact number texts.
  if (parsed === undefined) rememberRawNumbers(text, body);
  let inner = body;
  let base = '';
  let outer: Record<string, Json> | undefined;
  if (call.method === 'countTokens') {
    const c = check(CountRequest, body);
    if (c.generateContentRequest !== undefined) {
      inner = c.generateContentRequest;
      base = 'generateContentRequest';
      outer = c as Record<string, Json>;
    } else if (c.contents === undefined) throw new UserError('contents: expected an array');
  }
  const b = check(GenerateRequest, inner, base);
  const session = importGemini(outer === undefined ? new JsonDocument(body) : JSON.stringify(inner), WHERE);
  const system = instructionText(b.systemInstruction);
  const tools = toolsOf(b.tools);
  const envelope = {
    wire: 'gemini',
    model: call.model,
    requestFields: {},
    ...(system !== undefined ? { system } : {}),
    ...(tools !== undefined ? { tools } : {}),
  } as unknown as FileRequestEnvelope;
  return {
    protocol: 'gemini',
    model: call.model,
    // Only an SSE answer is read event by event; the JSON array is read whole.
    stream: call.method === 'streamGenerateContent' && searchParams.get('alt') === 'sse',
    ...(b.generationConfig?.maxOutputTokens !== undefined
      ? { maxOutput: b.generationConfig.maxOutputTokens }
      : {}),
    prefix: [],
    messages: session.messages,
    envelope,
    meta: { ...session.meta, ...(outer !== undefined ? { geminiOuter: outer } : {}) },
  };
}

/** The body to send upstream: the request with its projected contents (inside its wrapper when it had one). */
export function writeGeminiRequest(req: ParsedRequest, messages: readonly Message[]): string {
  const text = exportGemini(messages, req.meta);
  const outer = req.meta.geminiOuter as Record<string, Json> | undefined;
  if (outer === undefined) return text;
  return `${JSON.stringify({ ...outer, generateContentRequest: JSON.parse(text) as Json }, null, 2)}\n`;
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
};

/** An error body as the Gemini API writes one. */
export function geminiErrorBody(status: number, message: string): string {
  const name = STATUS_NAMES[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
  return JSON.stringify({ error: { code: status, message, status: name } });
}
