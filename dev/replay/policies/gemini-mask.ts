import { textOf, type Message } from '../../../src/messages/message.js';
import type { RetentionPolicy } from '../types.js';
import { replaceResults } from './replace-results.js';

/** Gemini CLI tool-output masking: the newest 50,000 tokens of tool output are protected … */
export const GEMINI_PROTECT_TOKENS = 50_000;
/** … and masking runs only once at least 30,000 prunable tokens have accumulated. */
export const GEMINI_MIN_PRUNABLE_TOKENS = 30_000;
/** Lines of head and of tail kept in the masked snippet's preview (our choice; Gemini keeps a head/tail preview). */
export const GEMINI_PREVIEW_LINES = 3;
const PREVIEW_LINE_CHARS = 160;

const memo = new WeakMap<Message, Message>();

function maskedSnippet(m: Message): Message {
  const lines = textOf(m.content).split('\n');
  const cut = (l: string) => (l.length > PREVIEW_LINE_CHARS ? `${l.slice(0, PREVIEW_LINE_CHARS)}…` : l);
  const head = lines.slice(0, GEMINI_PREVIEW_LINES).map(cut);
  const tail = lines.length > 2 * GEMINI_PREVIEW_LINES ? lines.slice(-GEMINI_PREVIEW_LINES).map(cut) : [];
  const omitted = Math.max(0, lines.length - head.length - tail.length);
  const body = [...head, ...(omitted > 0 ? [`… ${omitted} lines masked …`] : []), ...tail].join('\n');
  return {
    ...m,
    content: `<tool_output_masked tool="${m.toolName ?? 'tool'}">\nOutput saved to a session file; preview:\n${body}\n</tool_output_masked>`,
  };
}

/**
 * Gemini CLI-style masking (written from its constants): scanning backwards, tool
 * outputs within the newest 50,000 tokens are protected; older ones are prunable; when
 * they add up to at least 30,000 tokens, each is replaced by a tagged snippet with a short
 * head/tail preview (only where that is smaller). Runs every turn, independent of any
 * trigger.
 */
export const geminiMaskPolicy: RetentionPolicy = {
  name: 'gemini-mask',
  description:
    'Gemini CLI masking: protect the newest 50,000 tool tokens, mask older ones when ≥ 30,000 prunable.',
  source: 'reimplemented',
  project(history, { estimator }) {
    let seen = 0;
    let prunable = 0;
    const mask: number[] = [];
    for (let i = history.length - 1; i >= 0; i--) {
      const m = history[i];
      if (m.role !== 'tool') continue;
      const t = estimator.message(m);
      seen += t;
      if (seen <= GEMINI_PROTECT_TOKENS) continue;
      let snippet = memo.get(m);
      if (!snippet) memo.set(m, (snippet = maskedSnippet(m)));
      if (estimator.message(snippet) >= t) continue;
      mask.push(i);
      prunable += t;
    }
    if (prunable < GEMINI_MIN_PRUNABLE_TOKENS) return Promise.resolve(history);
    return Promise.resolve(replaceResults(history, mask, memo, maskedSnippet));
  },
};
