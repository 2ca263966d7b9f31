/**
 * The providers' own compaction as the fake agent model plays it: OpenAI's
 * `POST /v1/responses/compact` (the user messages kept, the rest folded into one opaque item)
 * and Anthropic's threshold compaction (the `compact_20260112` edit paused after compacting),
 * with the checks the real Anthropic API makes of a request's tools and compaction blocks.
 */
import type { ServerResponse } from 'node:http';
import { summarySections } from '../../src/summary/index.js';
import { sendJson, type RecordedRequest } from './fake-http.js';
import { estimateBodyTokens } from './fake-window.js';

/** The text of the first user message of a request in any of the three shapes. */
export function firstUserText(body: any): string {
  const list: any[] = body.messages ?? body.input ?? [];
  // After an Anthropic compaction the block's summary stands for everything before it.
  const block = compactionBlocks(body).at(-1)?.block;
  if (typeof block?.content === 'string') return block.content;
  const first = list.find((m) => m?.role === 'user');
  const content = first?.content;
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map((c: any) => c?.text ?? '').join('') : '';
}

/**
 * OpenAI's native compaction: the input's user messages kept, everything else folded into one
 * opaque compaction item.
 */
export function compactResponses(req: RecordedRequest, res: ServerResponse): void {
  const input: unknown[] = Array.isArray(req.body?.input) ? req.body.input : [];
  const users = input
    .filter((i) => (i as { role?: string } | null)?.role === 'user')
    .map((i, n) => {
      const content = (i as { content: unknown }).content;
      const parts = typeof content === 'string' ? [{ type: 'input_text', text: content }] : content;
      return { id: `msg_u${n + 1}`, type: 'message', status: 'completed', role: 'user', content: parts };
    });
  const encrypted = `gAAAAcompacted-${input.length}-items==`;
  const usage = { input_tokens: estimateBodyTokens(req.body), output_tokens: 200 };
  sendJson(res, 200, {
    id: `resp_compact_${input.length}`,
    object: 'response.compaction',
    created_at: 1_767_225_600,
    output: [...users, { id: `cmp_${input.length}`, type: 'compaction', encrypted_content: encrypted }],
    usage,
  });
}

/** The compaction blocks of a Messages body, with where they are. */
function compactionBlocks(body: any): { at: string; block: any }[] {
  const found: { at: string; block: any }[] = [];
  (Array.isArray(body?.messages) ? body.messages : []).forEach((m: any, i: number) => {
    if (Array.isArray(m?.content))
      m.content.forEach((b: any, j: number) => {
        if (b?.type === 'compaction') found.push({ at: `messages.${i}.content.${j}`, block: b });
      });
  });
  return found;
}

const COMPACTION_KEYS = new Set(['type', 'content', 'encrypted_content', 'cache_control']);
export const anthropicError = (message: string) => ({
  type: 'error',
  error: { type: 'invalid_request_error', message },
});

/**
 * What Anthropic checks of a request's tools and of threshold compaction: a request with tool
 * blocks must define its tools; the compact edit needs its beta and a trigger
 * of at least 50,000 tokens; a compaction block is only accepted from a request that carries
 * the beta and declares the edit, and with no keys the block does not have. Undefined: accepted.
 */
export function compactionRefusal(req: RecordedRequest): string | undefined {
  const betas = String(req.headers['anthropic-beta'] ?? '')
    .split(',')
    .map((b) => b.trim());
  const edits: any[] = Array.isArray(req.body?.context_management?.edits)
    ? req.body.context_management.edits
    : [];
  const compact = edits.find((e) => e?.type === 'compact_20260112');
  const hasBeta = betas.includes('compact-2026-01-12');
  if (compact !== undefined && !hasBeta) return 'context_management.edits.0: Extra inputs are not permitted';
  if (compact !== undefined && !(compact.trigger?.value >= 50_000))
    return 'context_management.edits.0.trigger.value: Input should be greater than or equal to 50000';
  const blocks = (req.body?.messages ?? []).flatMap((m: any) => (Array.isArray(m?.content) ? m.content : []));
  const usesTools = blocks.some((b: any) => b?.type === 'tool_use' || b?.type === 'tool_result');
  if (usesTools && !(Array.isArray(req.body.tools) && req.body.tools.length > 0))
    return 'Requests which include tool_use or tool_result blocks must define tools.';
  for (const { at, block } of compactionBlocks(req.body)) {
    if (!hasBeta)
      return `${at}: Input tag 'compaction' found using 'type' does not match any of the expected tags`;
    const extra = Object.keys(block).find((k) => !COMPACTION_KEYS.has(k));
    if (extra !== undefined) return `${at}.compaction.${extra}: Extra inputs are not permitted`;
    if (block.content === '') return `${at}.compaction.content: Empty string content is not allowed`;
    if (compact === undefined)
      return `${at}: a compaction block requires the compact_20260112 edit in context_management`;
  }
  return undefined;
}

/** A paused compaction: one block holding the summary (the goal restated, the step it was written at). */
export function compactAnthropic(req: RecordedRequest, res: ServerResponse, step: number): void {
  const goal = firstUserText(req.body)
    .replace(/^## Goal\n/, '')
    .split('\n## ')[0];
  const rest = summarySections().slice(1);
  const written = `(compacted at step ${step})`;
  const content = [`## Goal\n${goal}`, ...rest.map((s) => `## ${s}\n${written}`)].join('\n');
  const input = estimateBodyTokens(req.body);
  sendJson(res, 200, {
    id: `msg_compact_${step}`,
    type: 'message',
    role: 'assistant',
    model: req.body.model,
    content: [{ type: 'compaction', content, encrypted_content: null }],
    stop_reason: 'compaction',
    stop_sequence: null,
    usage: {
      input_tokens: 0,
      output_tokens: 0,
      iterations: [{ type: 'compaction', input_tokens: input, output_tokens: 300 }],
    },
  });
}

/** Whether a Messages request asks to stop once it has compacted. */
export const pausesToCompact = (body: any) =>
  Array.isArray(body?.context_management?.edits) &&
  body.context_management.edits.some(
    (e: any) => e?.type === 'compact_20260112' && e.pause_after_compaction === true,
  );
