import type { Estimator } from '../estimate/estimator.js';
import { MESSAGE_OVERHEAD } from '../estimate/estimator.js';
import { hasToolCalls, msg, textOf, type Json, type Message } from '../messages/message.js';
import { commandOf, parseArguments, pathsOfCall, readResult, toolKind } from './offline/tool-calls.js';
import { shellFiles } from './offline/shell.js';
import { previewText } from './preview.js';
import { isSummaryMessage } from './rebuild.js';
import { REINJECTION_METADATA_KIND } from './summary-message.js';

/** Ceiling of the default re-injection budget, and the default when the window is unknown. */
export const REINJECT_BUDGET_MAX_TOKENS = 4_000;

/** Share of the context window the default re-injection budget may take. */
export const REINJECT_BUDGET_WINDOW_RATIO = 0.05;

/**
 * Default re-injection budget: `min(4,000, floor(capacity × 0.05))` — 800 at 16k, 1,600
 * at 32k, the full 4,000 from 80k — or 4,000 when the window is unknown. A fixed 4,000 would
 * take a quarter of a 16k window right after compacting, so the context would refill within
 * a turn or two and the loop guard (context refills too fast) would stop automatic compaction.
 */
export function defaultReinjectBudget(capacity: number | null): number {
  if (capacity === null) return REINJECT_BUDGET_MAX_TOKENS;
  return Math.min(
    REINJECT_BUDGET_MAX_TOKENS,
    Math.floor(Math.max(capacity, 0) * REINJECT_BUDGET_WINDOW_RATIO),
  );
}

/** Options of {@link buildReinjection}. */
export interface ReinjectionOptions {
  /** Total tokens the re-injected messages may take. */
  budgetTokens: number;
  estimator: Estimator;
  /** At most this many files (default 5, newest first). */
  maxFiles?: number;
  /** Re-inject the leading system messages (default true). */
  includeSystem?: boolean;
  /** Smallest useful file preview; a file that would get less is left out (default 256). */
  minFileTokens?: number;
}

/** One re-injected file. */
export interface ReinjectedFile {
  path: string;
  /** Where the content came from: a successful read result or write arguments. */
  source: 'read' | 'write';
  /** Whether the content was previewed to fit. */
  truncated: boolean;
}

/** What {@link buildReinjection} returns. */
export interface Reinjection {
  /** The frozen leading system messages, verbatim. */
  system: Message[];
  /** One user message holding the files' latest contents, or none. */
  files: Message[];
  included: ReinjectedFile[];
  tokens: number;
}

const CONTENT_KEYS = ['content', 'file_text', 'contents', 'text', 'new_content'];

interface Snapshot {
  path: string;
  content: string;
  source: 'read' | 'write';
}

/**
 * The latest known full content of each file, newest first. Walks calls newest-first;
 * the newest touch of a path decides: a write with full content or a successful read
 * gives the content, a partial edit (str_replace, sed -i, patch) makes older content
 * stale, so that path is skipped. Lazy: the caller stops after a few files, so only the
 * recent end of a long history is walked (the whole walk of 100,000
 * messages left about 19 MB of garbage).
 */
function* latestFileContents(history: readonly Message[]): Generator<Snapshot> {
  const resultOf = newestResults(history);
  const decided = new Set<string>();
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i];
    if (m.role === 'tool' && m.toolCallId !== undefined) resultOf.passed(m.toolCallId, m);
    if (!hasToolCalls(m)) continue;
    const out: Snapshot[] = [];
    for (let c = m.toolCalls.length - 1; c >= 0; c--) {
      const call = m.toolCalls[c];
      const args = parseArguments(call);
      const kind = toolKind(call, args);
      const result = resultOf.get(call.id);
      const resultText = result ? textOf(result.content) : '';
      const reading = readResult(result, resultText);
      const decide = (path: string, content: string | undefined, source: 'read' | 'write') => {
        if (decided.has(path)) return;
        decided.add(path);
        if (content !== undefined) out.push({ path, content, source });
      };
      if (kind === 'write') {
        const full = CONTENT_KEYS.map((k) => args[k]).find((v): v is string & Json => typeof v === 'string');
        const ok = reading.status === 'completed';
        for (const p of pathsOfCall(call, args))
          decide(p, ok && full !== undefined ? full : undefined, 'write');
      } else if (kind === 'read' && reading.status === 'completed') {
        const paths = pathsOfCall(call, args);
        // A ranged read is not the whole file, but it is still the newest view we have.
        if (paths.length === 1) decide(paths[0], resultText, 'read');
      } else if (kind === 'shell') {
        const files = shellFiles(commandOf(call, args));
        for (const p of files.modified) decide(p, undefined, 'write');
        const cat = /^\s*cat\s+(\S+)\s*$/.exec(commandOf(call, args));
        if (cat && reading.status === 'completed') decide(cat[1], resultText, 'read');
      }
    }
    yield* out;
  }
}

/**
 * The last tool result in the whole history with a call id, for a walk from the end: results
 * after the walk's position are remembered as it passes them (the first one passed is the
 * last), and only an id with none there (a result before its call, or none) looks at the
 * whole history, once.
 */
function newestResults(history: readonly Message[]) {
  const passed = new Map<string, Message>();
  let all: Map<string, Message> | undefined;
  return {
    passed(id: string, m: Message): void {
      if (!passed.has(id)) passed.set(id, m);
    },
    get(id: string): Message | undefined {
      const hit = passed.get(id);
      if (hit !== undefined) return hit;
      if (!all) {
        all = new Map();
        for (const m of history)
          if (m.role === 'tool' && m.toolCallId !== undefined) all.set(m.toolCallId, m);
      }
      return all.get(id);
    },
  };
}

/**
 * Post-compaction re-injection of durable context: the frozen leading system messages (instructions) and
 * the latest contents of the most recently touched files, newest first, within
 * `budgetTokens`. The system messages come first and are previewed if they alone exceed
 * the budget; each file is whole when it fits, else previewed once into what remains (if
 * at least `minFileTokens`), after which selection stops. Pure; reads only `history`.
 */
export function buildReinjection(history: readonly Message[], options: ReinjectionOptions): Reinjection {
  const est = options.estimator;
  let left = options.budgetTokens;
  const system: Message[] = [];
  if (options.includeSystem ?? true)
    for (const m of history) {
      if (m.role !== 'system') break;
      if (isSummaryMessage(m)) continue;
      const tokens = est.message(m);
      if (tokens <= left) {
        system.push(m);
        left -= tokens;
      } else if (left > MESSAGE_OVERHEAD * 4) {
        const cut = { ...m, content: previewText(textOf(m.content), left - MESSAGE_OVERHEAD, est) };
        system.push(cut);
        left -= est.message(cut);
        break;
      } else break;
    }

  const header = 'Recently touched files (latest contents, re-injected after compaction; newest first):';
  const minFile = options.minFileTokens ?? 256;
  const sections: string[] = [];
  const included: ReinjectedFile[] = [];
  let used = est.text(header) + MESSAGE_OVERHEAD;
  for (const snap of latestFileContents(history)) {
    if (included.length >= (options.maxFiles ?? 5)) break;
    const frame = (body: string) => `\n\n### ${snap.path}\n\`\`\`\n${body}\n\`\`\``;
    const whole = frame(snap.content);
    const cost = est.text(whole);
    if (used + cost <= left) {
      sections.push(whole);
      included.push({ path: snap.path, source: snap.source, truncated: false });
      used += cost;
      continue;
    }
    const room = left - used - est.text(frame(''));
    if (room >= minFile) {
      const part = frame(previewText(snap.content, room, est));
      if (used + est.text(part) <= left) {
        sections.push(part);
        included.push({ path: snap.path, source: snap.source, truncated: true });
      }
    }
    break;
  }
  const files =
    sections.length === 0
      ? []
      : [msg.user(header + sections.join(''), { metadata: { kind: REINJECTION_METADATA_KIND } })];
  return { system, files, included, tokens: est.history(system) + est.history(files) };
}

/**
 * Places a re-injection into a rebuilt history: system messages first (unless the
 * history already starts with them), the files message right after the leading summary
 * message(s).
 */
export function applyReinjection(rebuilt: readonly Message[], r: Reinjection): Message[] {
  let lead = 0;
  while (lead < rebuilt.length && isSummaryMessage(rebuilt[lead])) lead++;
  const hasSystem = rebuilt.length > 0 && rebuilt[0].role === 'system';
  return [...(hasSystem ? [] : r.system), ...rebuilt.slice(0, lead), ...r.files, ...rebuilt.slice(lead)];
}
