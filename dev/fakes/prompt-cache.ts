/**
 * A prompt cache as the providers keep one, for the fake upstreams: a request's prompt is read
 * as blocks in the order the provider caches them (tools, system prompt, then each message or
 * content block), and the tokens served from cache are the longest run of leading blocks that a
 * previous request's prompt began with, rounded as each provider rounds:
 *
 * - OpenAI (Chat Completions and Responses): every prompt of 1,024 tokens or more is cached;
 *   hits count in 128-token steps (`prompt_tokens_details.cached_tokens`,
 *   `input_tokens_details.cached_tokens`).
 * - Anthropic: only at `cache_control` breakpoints (on a block, or one at the top level that
 *   marks the last block). A breakpoint writes the prefix up to it (at least 1,024 tokens) and
 *   reads the longest entry found looking back at most 20 blocks from it. A changed
 *   `tool_choice` or thinking setting misses every cached message (tools and system stay).
 *   `input_tokens` counts what is neither read nor written.
 * - Gemini (implicit caching): prompts of 1,024 tokens or more, `cachedContentTokenCount`.
 *
 * Blocks are compared by what the model reads (role, text, call names, arguments, ids), not by
 * JSON layout, as a provider renders a request into tokens before it caches it.
 */
import { createHash } from 'node:crypto';
import { fakeTokenCount } from './fake-token-count.js';

export type CacheProtocol = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini';

/** What a request's usage reports: its input, and of it the tokens read from and written to the cache. */
export interface FakeUsage {
  input: number;
  cached: number;
  written: number;
}

const MIN_CACHED = 1_024;
const OPENAI_STEP = 128;
const ANTHROPIC_LOOKBACK = 20;

interface Block {
  text: string;
  /** Anthropic: a cache breakpoint ends at this block. */
  breakpoint?: boolean;
}

/** JSON with sorted keys, so equal content compares equal whatever order a writer used. */
function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .filter((k) => k !== 'cache_control' && (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** The text of a content field: a string, or the text of its parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? '' : stable(content);
  return content
    .map((p: any) => (typeof p === 'string' ? p : typeof p?.text === 'string' ? p.text : stable(p)))
    .join('');
}

const argsOf = (a: unknown) => (typeof a === 'string' ? stable(safeParse(a)) : stable(a));
function safeParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

function chatBlocks(body: any): Block[] {
  const tools = (body.tools ?? []).map((t: any) => ({ text: `tool ${stable(t)}` }));
  const messages = (body.messages ?? []).map((m: any) => ({
    text: stable({
      role: m.role === 'developer' ? 'system' : m.role,
      text: textOf(m.content),
      calls: (m.tool_calls ?? []).map((c: any) => [c.id, c.function?.name, argsOf(c.function?.arguments)]),
      result: m.tool_call_id,
    }),
  }));
  return [...tools, ...messages];
}

function responsesBlocks(body: any): Block[] {
  const tools = (body.tools ?? []).map((t: any) => ({ text: `tool ${stable(t)}` }));
  const system = body.instructions ? [{ text: `system ${textOf(body.instructions)}` }] : [];
  const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input ?? []);
  const items = input.map((i: any) => ({
    text: stable({
      type: i.type ?? 'message',
      role: i.role,
      text: textOf(i.content),
      call: i.call_id,
      name: i.name,
      args: i.arguments === undefined ? undefined : argsOf(i.arguments),
      output: i.output === undefined ? undefined : textOf(i.output),
    }),
  }));
  return [...tools, ...system, ...items];
}

function anthropicBlocks(body: any): Block[] {
  const mark = (b: any) => (b?.cache_control ? { breakpoint: true } : {});
  const tools = (body.tools ?? []).map((t: any) => ({ text: `tool ${stable(t)}`, ...mark(t) }));
  const system =
    typeof body.system === 'string'
      ? [{ text: `system ${body.system}` }]
      : (body.system ?? []).map((b: any) => ({ text: `system ${textOf([b])}`, ...mark(b) }));
  // What the cached messages depend on besides themselves.
  const settings = { text: `settings ${stable({ tool_choice: body.tool_choice, thinking: body.thinking })}` };
  const blocks: Block[] = [];
  for (const m of body.messages ?? []) {
    const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content ?? []);
    for (const b of content)
      blocks.push({
        text: stable({
          role: m.role,
          type: b.type,
          text: b.text,
          id: b.id,
          name: b.name,
          input: b.input,
          result: b.tool_use_id,
          content: b.content === undefined ? undefined : textOf(b.content),
        }),
        ...mark(b),
      });
  }
  const all = [...tools, ...system, settings, ...blocks];
  if (body.cache_control && all.length > 0)
    all[all.length - 1] = { ...all[all.length - 1], breakpoint: true };
  return all;
}

function geminiBlocks(body: any): Block[] {
  const b = body.generateContentRequest ?? body;
  const system = b.systemInstruction ? [{ text: `system ${textOf(b.systemInstruction.parts)}` }] : [];
  // The model reads one list of functions, however the request groups them.
  const tools = (b.tools ?? []).flatMap((t: any) =>
    t?.functionDeclarations
      ? t.functionDeclarations.map((d: any) => ({ text: `tool ${stable(d)}` }))
      : [{ text: `tool ${stable(t)}` }],
  );
  const contents = (b.contents ?? []).map((c: any) => ({
    text: stable({
      role: c.role,
      parts: (c.parts ?? []).map((p: any) => stable({ ...p, thoughtSignature: undefined })),
    }),
  }));
  return [...system, ...tools, ...contents];
}

const BLOCKS: Record<CacheProtocol, (body: any) => Block[]> = {
  anthropic: anthropicBlocks,
  'openai-chat': chatBlocks,
  'openai-responses': responsesBlocks,
  gemini: geminiBlocks,
};

/** Each block's prefix print and the tokens up to its end. */
function prefixes(blocks: Block[]): { print: string; tokens: number }[] {
  const out: { print: string; tokens: number }[] = [];
  let print = '';
  let tokens = 0;
  for (const b of blocks) {
    print = createHash('sha1').update(print).update('\u0000').update(b.text).digest('base64');
    tokens += fakeTokenCount(b.text);
    out.push({ print, tokens });
  }
  return out;
}

/** One fake server's prompt cache (every client of the server shares it, as an organisation does). */
export class FakePromptCache {
  private readonly entries = new Set<string>();

  /** The usage of a request whose input is `input` tokens, and the cache it leaves for the next ones. */
  count(protocol: CacheProtocol, body: unknown, input: number): FakeUsage {
    const blocks = BLOCKS[protocol](body ?? {});
    const at = prefixes(blocks);
    const usage = protocol === 'anthropic' ? this.anthropic(blocks, at) : this.implicit(at);
    // Blocks are counted with their field names; the share they give is applied to the input.
    const total = Math.max(1, at.at(-1)?.tokens ?? 0);
    const scale = (n: number) => Math.min(input, Math.floor((n * input) / total));
    let cached = usage.cached < MIN_CACHED ? 0 : scale(usage.cached);
    if (protocol === 'openai-chat' || protocol === 'openai-responses') cached -= cached % OPENAI_STEP;
    const written = usage.written < MIN_CACHED ? 0 : Math.min(input - cached, scale(usage.written));
    return { input, cached, written };
  }

  /** OpenAI and Gemini: the whole prompt is cached; hits from the longest known prefix (block tokens). */
  private implicit(at: { print: string; tokens: number }[]): { cached: number; written: number } {
    let hit = 0;
    for (const p of at) if (this.entries.has(p.print)) hit = p.tokens;
    const total = at.at(-1)?.tokens ?? 0;
    if (total >= MIN_CACHED) for (const p of at) this.entries.add(p.print);
    return { cached: hit, written: 0 };
  }

  /** Anthropic: read and write only at breakpoints (block tokens). */
  private anthropic(
    blocks: Block[],
    at: { print: string; tokens: number }[],
  ): { cached: number; written: number } {
    let read = 0;
    let end = 0;
    blocks.forEach((b, i) => {
      if (!b.breakpoint) return;
      end = Math.max(end, at[i].tokens);
      for (let j = i; j >= Math.max(0, i - ANTHROPIC_LOOKBACK); j--)
        if (this.entries.has(at[j].print)) {
          read = Math.max(read, at[j].tokens);
          break;
        }
    });
    blocks.forEach((b, i) => {
      if (b.breakpoint && at[i].tokens >= MIN_CACHED) this.entries.add(at[i].print);
    });
    return { cached: read, written: end >= MIN_CACHED ? Math.max(0, end - read) : 0 };
  }
}
