/**
 * The declared context window of a fake provider, as a real provider enforces it: every request's estimated
 * input plus the output it asks for (`max_tokens`, `max_completion_tokens`,
 * `max_output_tokens`, Gemini's `maxOutputTokens`) must fit, or the fake answers 400 and records a violation that makes
 * `close()` reject — so a test whose client sends an oversized request fails by construction.
 *
 * The input estimate is independent of Compactor's estimator: o200k tokens of every string
 * value in the body (keys and the model name excluded) plus 4 per list item, roughly how a
 * provider counts a prompt.
 */
import { lookupModel } from '../../src/providers/catalog.js';
import { fakeTokenCount } from './fake-token-count.js';

const ITEM_OVERHEAD = 4;

/** Estimated prompt tokens of a request body. */
export function estimateBodyTokens(body: unknown): number {
  let n = 0;
  const walk = (v: unknown, key: string): void => {
    if (typeof v === 'string') {
      if (key !== 'model') n += fakeTokenCount(v);
    } else if (Array.isArray(v)) {
      for (const x of v) {
        n += ITEM_OVERHEAD;
        walk(x, key);
      }
    } else if (v !== null && typeof v === 'object')
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(x, k);
  };
  walk(body, '');
  return n;
}

/** Output tokens a request asks for (0 when it names no limit). */
export function requestedOutputTokens(body: unknown): number {
  const b = (body ?? {}) as Record<string, unknown>;
  // Gemini names it in generationConfig (inside generateContentRequest for a token count).
  const inner = (b.generateContentRequest ?? b) as { generationConfig?: { maxOutputTokens?: unknown } };
  const v =
    b.max_tokens ?? b.max_completion_tokens ?? b.max_output_tokens ?? inner.generationConfig?.maxOutputTokens;
  return typeof v === 'number' ? v : 0;
}

/** A request that does not fit its window: what it needs and the violation text. */
export interface WindowOverflow {
  input: number;
  output: number;
  window: number;
  message: string;
}

/** How `body` overflows `window`, or null when it fits. */
export function windowOverflow(path: string, body: unknown, window: number): WindowOverflow | null {
  const input = estimateBodyTokens(body);
  const output = requestedOutputTokens(body);
  if (input + output <= window) return null;
  const message = `fake server: ${path} request needs ${input + output} tokens (input ${input} + max output ${output}) but the declared window is ${window}`;
  return { input, output, window, message };
}

/**
 * The bundled catalog's context window of a model: the window a test's route works with when
 * the test sets no capacity, so the fake server declares that one.
 */
export function catalogWindow(provider: string, model: string): number {
  const w = lookupModel(provider, provider, model)?.contextWindow;
  if (w === undefined) throw new Error(`no catalog window for ${provider}/${model}: declare the test's own`);
  return w;
}
