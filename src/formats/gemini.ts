import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  RecordSchema,
  textOf,
  type ContentPart,
  type Json,
  type Message,
  type ToolCall,
} from '../messages/message.js';
import { OPAQUE_SENT } from '../estimate/estimator.js';
import { validate } from './input-error.js';
import { parseJson, type SessionText } from './json-text.js';
import { envelopeOf, providerMetaFor, writeDocument } from './provider-envelope.js';
import { attachRoundTrip, exportGroups, type ImportedGroup } from './round-trip.js';
import type { ImportedSession } from './types.js';

/**
 * Gemini API requests (`generateContent`): `contents` of `{role: user|model, parts}`. A model
 * turn is one assistant message (text parts, `functionCall` parts as its tool calls); a user
 * turn splits into a tool message per `functionResponse` and a user message per run of other
 * parts. Parts nothing here models (thoughts, `executableCode`, unknown kinds) ride along
 * verbatim in `reasoningDetails`; every field round-trips exactly while a message is unchanged.
 */

const FunctionCall = z.looseObject({
  name: z.string().min(1),
  id: z.string().optional(),
  args: RecordSchema.optional(),
});
const FunctionResponse = z.looseObject({
  name: z.string().min(1),
  id: z.string().optional(),
  response: RecordSchema.optional(),
});
const Part = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
  functionCall: FunctionCall.optional(),
  functionResponse: FunctionResponse.optional(),
  inlineData: z.looseObject({ mimeType: z.string().optional(), data: z.string() }).optional(),
  fileData: z.looseObject({ mimeType: z.string().optional(), fileUri: z.string() }).optional(),
});
const GeminiContent = z.looseObject({ role: z.string().optional(), parts: z.array(z.unknown()).optional() });
const GeminiDoc = z.looseObject({ contents: z.array(z.unknown()) });

type PartValue = z.infer<typeof Part>;

/** Call ids the wire did not carry: made up here so calls and results pair, never sent. */
const MADE_UP = 'gemini-call:';
const madeUpId = (content: number, part: number) => `${MADE_UP}${content}:${part}`;

/** A tool result's `response` that is only `{output: text}` travels as that text. */
const OUTPUT_ONLY = 'output';

interface OpenCall {
  id: string;
  name: string;
  wireId?: string;
}

/** The canonical part of a user part, or undefined when the part is not modelled. */
function userPart(p: PartValue): ContentPart | undefined {
  const keys = Object.keys(p).filter((k) => k !== 'thoughtSignature');
  if (keys.length !== 1) return undefined;
  if (p.text !== undefined) return { type: 'text', text: p.text };
  if (p.inlineData !== undefined) {
    const mime = p.inlineData.mimeType;
    const kind = mime?.startsWith('image/') ? 'image' : 'file';
    return { type: kind, data: p.inlineData.data, ...(mime !== undefined ? { mimeType: mime } : {}) };
  }
  if (p.fileData !== undefined) {
    const mime = p.fileData.mimeType;
    return { type: 'file', url: p.fileData.fileUri, ...(mime !== undefined ? { mimeType: mime } : {}) };
  }
  return undefined;
}

/** The text a tool result is kept as: `response.output` when that is all, else the JSON. */
function resultText(response: Record<string, unknown> | undefined): { text: string; shape?: string } {
  const r = response ?? {};
  const keys = Object.keys(r);
  if (keys.length === 1 && typeof r.output === 'string') return { text: r.output, shape: OUTPUT_ONLY };
  return { text: JSON.stringify(r) };
}

/**
 * A call's thought signature, kept beside the message rather than on the call: clearing an old
 * call's input drops the signatures of calls, and Gemini refuses calls of the current turn that
 * lost theirs. It goes back with its call; with the arguments changed, as the documented
 * marker for a call the model did not sign as it is now.
 */
const SIGNED_CALL = 'geminiSignedCall';
const SKIP_SIGNATURE = 'skip_thought_signature_validator';
interface SignedCall {
  [SIGNED_CALL]: number;
  thoughtSignature: string;
  args: string;
}
const isSignedCall = (d: Json): d is Json & SignedCall =>
  typeof d === 'object' && d !== null && !Array.isArray(d) && typeof d[SIGNED_CALL] === 'number';
const digest = (text: string) => createHash('sha1').update(text).digest('base64url').slice(0, 16);

const TEXT_KEYS = new Set(['text', 'thoughtSignature']);
const onlyKeys = (p: object, keys: Set<string>) => Object.keys(p).every((k) => keys.has(k));

/** One model turn as an assistant message. */
function modelMessage(parts: PartValue[], raw: Json[], index: number, open: OpenCall[]): Message {
  const content: ContentPart[] = [];
  const calls: ToolCall[] = [];
  const details: Json[] = [];
  parts.forEach((p, j) => {
    if (p.functionCall !== undefined) {
      const fc = p.functionCall;
      const id = fc.id ?? madeUpId(index, j);
      const args = JSON.stringify(fc.args ?? {});
      if (p.thoughtSignature !== undefined)
        details.push({
          [SIGNED_CALL]: calls.length,
          thoughtSignature: p.thoughtSignature,
          args: digest(args),
        });
      calls.push({ id, name: fc.name, arguments: args });
      open.push({ id, name: fc.name, ...(fc.id !== undefined ? { wireId: fc.id } : {}) });
    } else if (p.text !== undefined && p.thought !== true && onlyKeys(p, TEXT_KEYS))
      // A signature on a text part comes back with it while the message is unchanged.
      content.push({ type: 'text', text: p.text });
    else details.push(raw[j]);
  });
  const m: Message = { role: 'assistant', content };
  if (calls.length > 0) m.toolCalls = calls;
  if (details.length > 0) {
    m.reasoningDetails = details;
    m.metadata = { [OPAQUE_SENT]: true };
  }
  return m;
}

/** One user turn as tool messages (its results) and user messages (runs of other parts). */
function userMessages(parts: PartValue[], raw: Json[], index: number, open: OpenCall[]): Message[] {
  const out: Message[] = [];
  let pending: Message | undefined;
  const flush = () => {
    if (pending) out.push(pending);
    pending = undefined;
  };
  parts.forEach((p, j) => {
    if (p.functionResponse === undefined) {
      pending ??= { role: 'user', content: [] };
      const part = userPart(p);
      if (part !== undefined) (pending.content as ContentPart[]).push(part);
      else {
        (pending.reasoningDetails ??= []).push(raw[j]);
        pending.metadata = { [OPAQUE_SENT]: true };
      }
      return;
    }
    flush();
    const fr = p.functionResponse;
    // The call it answers: the one with its id, else the first open call of its name.
    const k = open.findIndex((c) => (fr.id !== undefined && c.wireId === fr.id) || c.name === fr.name);
    const call = k >= 0 ? open.splice(k, 1)[0] : undefined;
    const { text, shape } = resultText(fr.response);
    const metadata: Record<string, Json> = { geminiId: fr.id ?? null };
    if (shape !== undefined) metadata.geminiResponse = shape;
    out.push({
      role: 'tool',
      content: text,
      toolCallId: call?.id ?? fr.id ?? madeUpId(index, j),
      toolName: fr.name,
      metadata,
    });
  });
  flush();
  return out;
}

function argsOf(args: string): Json {
  try {
    const v = JSON.parse(args) as Json;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {
    // Arguments another format wrote as text.
  }
  return args === '' ? {} : { input: args };
}

/** A call's signature: its own, else the one it came with (while its arguments are as signed). */
function signatureOf(c: ToolCall, signed: SignedCall | undefined): string | undefined {
  if (c.thoughtSignature !== undefined) return c.thoughtSignature;
  if (signed === undefined) return undefined;
  return signed.args === digest(c.arguments) ? signed.thoughtSignature : SKIP_SIGNATURE;
}

function callPart(c: ToolCall, signed: SignedCall | undefined): Json {
  // The API's own field order: id, name, args.
  const call: Record<string, Json> = {
    ...(c.id.startsWith(MADE_UP) ? {} : { id: c.id }),
    name: c.name,
    args: argsOf(c.arguments),
  };
  const signature = signatureOf(c, signed);
  return { functionCall: call, ...(signature !== undefined ? { thoughtSignature: signature } : {}) };
}

function resultPart(m: Message): Json {
  const text = textOf(m.content);
  const wireId = m.metadata?.geminiId;
  const id =
    typeof wireId === 'string'
      ? wireId
      : wireId === null || (m.toolCallId ?? MADE_UP).startsWith(MADE_UP)
        ? undefined
        : m.toolCallId;
  let response: Json = { output: text };
  if (m.metadata?.geminiResponse !== OUTPUT_ONLY) {
    // A result kept as JSON goes back as that object; a cleared one is text now.
    const parsed = argsOf(text);
    response =
      typeof parsed === 'object' && parsed !== null && !('input' in parsed) ? parsed : { output: text };
  }
  return {
    functionResponse: { ...(id !== undefined ? { id } : {}), name: m.toolName ?? 'tool', response },
  };
}

function partsOfContent(m: Message): Json[] {
  if (typeof m.content === 'string') return m.content === '' ? [] : [{ text: m.content }];
  return m.content.map((p): Json => {
    if (p.type === 'text') return { text: p.text };
    if (p.data !== undefined)
      return { inlineData: { mimeType: p.mimeType ?? 'application/octet-stream', data: p.data } };
    return {
      fileData: {
        mimeType: p.mimeType ?? 'application/octet-stream',
        fileUri: p.url ?? (p.type === 'file' ? p.fileId : undefined) ?? '',
      },
    };
  });
}

/** Builds contents from one group of messages: a model turn, or one user turn. */
function buildContents(ms: readonly Message[]): Json[] {
  if (ms[0].role === 'assistant') {
    const m = ms[0];
    const details = m.reasoningDetails ?? [];
    const signed = details.filter(isSignedCall);
    const parts = [
      ...details.filter((d) => !isSignedCall(d)),
      ...partsOfContent(m),
      ...(m.toolCalls ?? []).map((c, k) =>
        callPart(
          c,
          signed.find((x) => x[SIGNED_CALL] === k),
        ),
      ),
    ];
    return [{ role: 'model', parts }];
  }
  const parts = ms.flatMap((m) =>
    m.role === 'tool' ? [resultPart(m)] : [...partsOfContent(m), ...(m.reasoningDetails ?? [])],
  );
  return [{ role: 'user', parts }];
}

// Messages from elsewhere (a summary): a run of results is one user turn, anything else alone.
function defaultGrouping(ms: readonly Message[], start: number): number {
  if (ms[start].role !== 'tool') return 1;
  let n = 1;
  while (start + n < ms.length && ms[start + n].role === 'tool' && !ms[start + n].metadata?.roundTrip) n++;
  return n;
}

/**
 * The groups of `contents` items, the first of them at index `first` of the list; `open` holds
 * the calls of the model turn before them that no result answered yet.
 */
function contentGroups(contents: readonly unknown[], where: string, first: number, open: OpenCall[]) {
  return contents.map((value, k): ImportedGroup => {
    const i = first + k;
    const c = validate(GeminiContent, value, where, `contents[${i}]`);
    const raw = (c.parts ?? []) as Json[];
    // Checked here; unmodelled parts are kept as they came (their key order too).
    const parts = raw.map((p, j) => validate(Part, p, where, `contents[${i}].parts[${j}]`));
    // A model turn's calls are answered by the next turn; older open calls stay unpaired.
    if (c.role === 'model') {
      open.length = 0;
      return { raw: [value as Json], messages: [modelMessage(parts, raw, i, open)] };
    }
    const messages = userMessages(parts, raw, i, open);
    return {
      raw: [value as Json],
      messages: messages.length > 0 ? messages : [{ role: 'user', content: [] }],
    };
  });
}

/** Imports a Gemini `generateContent` request body; `where` names it in errors. */
export function importGemini(text: SessionText, where: string): ImportedSession {
  const parsed = parseJson(text, where) as { contents: unknown[] };
  validate(GeminiDoc, parsed, where);
  const messages = attachRoundTrip('gemini', contentGroups(parsed.contents, where, 0, []), buildContents);
  const envelope = envelopeOf(parsed as Record<string, unknown>, 'contents');
  return { id: 'main', messages, meta: { provider: { format: 'gemini', shape: 'object', envelope } } };
}

/**
 * The messages of `contents` items from index `first` of a list on, `before` the messages of
 * the items before them, as importing the whole list gives them (their groups counted from
 * `first`'s); undefined when the results of their first turn may answer calls before it.
 */
export function importGeminiTail(
  contents: readonly unknown[],
  where: string,
  first: number,
  before: readonly Message[],
): Message[] | undefined {
  const opening = contents[0] as { role?: unknown } | null | undefined;
  const last = before[before.length - 1];
  let open: OpenCall[];
  // A model turn closes the calls before it; else a turn right after one answers its calls.
  if (typeof opening === 'object' && opening !== null && opening.role === 'model') open = [];
  else if (last?.role === 'assistant')
    open = (last.toolCalls ?? []).map((c) => ({
      id: c.id,
      name: c.name,
      ...(c.id.startsWith(MADE_UP) ? {} : { wireId: c.id }),
    }));
  else return undefined;
  return attachRoundTrip('gemini', contentGroups(contents, where, first, open), buildContents);
}

/** Canonical messages as the items of a Gemini request's `contents`. */
export function exportGeminiContents(messages: readonly Message[]): Json[] {
  return exportGroups('gemini', messages, buildContents, defaultGrouping);
}

/** Writes canonical messages as a Gemini request body, with every other field of the imported one. */
export function exportGemini(messages: readonly Message[], meta?: Record<string, unknown>): string {
  const envelope = providerMetaFor(meta, 'gemini')?.envelope ?? {};
  return writeDocument(exportGeminiContents(messages), 'contents', 'object', envelope);
}
