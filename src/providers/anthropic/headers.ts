import type { Json } from '../../messages/message.js';
import type { ResolvedRoute } from '../catalog.js';
import type { Usage } from '../types.js';

/**
 * Anthropic transport details shared by the inline and summary clients: auth and version
 * headers, beta headers derived from the payload (never set by callers), and usage
 * aggregation over iterations.
 */

export const ANTHROPIC_VERSION = '2023-06-01';
export const BETA_COMPACT = 'compact-2026-01-12';
export const BETA_CONTEXT_MANAGEMENT = 'context-management-2025-06-27';

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Betas a Messages payload needs: `compact-2026-01-12` when an edit type starts with
 * `compact_` or any content block is a compaction block; `context-management-2025-06-27`
 * when an edit clears tool uses or thinking.
 */
export function betasForPayload(body: Record<string, unknown>): string[] {
  const betas = new Set<string>();
  const cm = body.context_management;
  const edits = isObj(cm) && Array.isArray(cm.edits) ? cm.edits : [];
  for (const e of edits) {
    const t = isObj(e) && typeof e.type === 'string' ? e.type : '';
    if (t.startsWith('compact_')) betas.add(BETA_COMPACT);
    if (t.startsWith('clear_tool_uses_') || t.startsWith('clear_thinking_'))
      betas.add(BETA_CONTEXT_MANAGEMENT);
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const m of messages) {
    const content = isObj(m) && Array.isArray(m.content) ? m.content : [];
    if (content.some((b) => isObj(b) && b.type === 'compaction')) betas.add(BETA_COMPACT);
  }
  return [BETA_COMPACT, BETA_CONTEXT_MANAGEMENT].filter((b) => betas.has(b));
}

/** Request headers for a Messages call: key, version, and payload-derived betas. */
export function anthropicHeaders(
  route: ResolvedRoute,
  body: Record<string, unknown>,
): Record<string, string> {
  const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
  const key = route.apiKey();
  if (key) headers['x-api-key'] = key;
  const betas = betasForPayload(body);
  if (betas.length > 0) headers['anthropic-beta'] = betas.join(',');
  return headers;
}

const RECOGNIZED_ITERATIONS = new Set(['message', 'fallback_message', 'advisor_message', 'compaction']);

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** Usage: sum recognized iterations; top-level usage only when there is no iteration data. */
export function aggregateAnthropicUsage(usage: unknown): Usage | undefined {
  if (!isObj(usage)) return undefined;
  const iterations = Array.isArray(usage.iterations)
    ? usage.iterations.filter(
        (it): it is Record<string, Json> => isObj(it) && RECOGNIZED_ITERATIONS.has(String(it.type)),
      )
    : [];
  const src: Record<string, unknown>[] = iterations.length > 0 ? iterations : [usage];
  let input = 0;
  let output = 0;
  let cached = 0;
  for (const u of src) {
    input += num(u.input_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens);
    output += num(u.output_tokens);
    cached += num(u.cache_read_input_tokens);
  }
  return { inputTokens: input, outputTokens: output, cachedInputTokens: cached };
}
