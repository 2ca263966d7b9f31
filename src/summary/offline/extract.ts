import { hasToolCalls, textOf, type Message } from '../../messages/message.js';
import { oneLine } from '../../core/text.js';
import { isReinjectionMessage, isSummaryMessage, summaryBody } from '../summary-message.js';
import { emptyFactLog, foldKey, note, type FactLog, type SessionFacts } from './facts.js';
import { collectSourceFacts, type OutputSource } from './output-facts.js';
import { aiderEdits } from './plan-edits.js';
import { describeCall, recordCall, type ForkCall } from './record-call.js';
import { parseArguments, toolKind } from './tool-calls.js';
import { parseSummarySections, restrictionSentences } from './user-text.js';

export type { SessionFacts } from './facts.js';

/** What the walk over the fork's messages collects before calls are read. */
interface Walk {
  goal: string;
  lastAssistantNote?: string;
  carried: Map<string, string[]>;
  calls: ForkCall[];
  resultOf: Map<ForkCall, Message>;
}

function onUser(walk: Walk, log: FactLog, m: Message, index: number): void {
  // An earlier Compactor summary (flat, abstract or detail band) is carried forward.
  if (isSummaryMessage(m)) {
    for (const [k, v] of parseSummarySections(summaryBody(m)))
      walk.carried.set(k, [...(walk.carried.get(k) ?? []), ...v]);
    return;
  }
  // The files a rebuild re-injected are context, not something the user asked for.
  if (isReinjectionMessage(m)) return;
  const trimmed = textOf(m.content).trim();
  if (trimmed === '' || /^<command-(?:message|name)>/.test(trimmed)) return;
  if (walk.goal === '') walk.goal = trimmed;
  else {
    const line = oneLine(trimmed, 300);
    note(log.laterRequests, line, index, foldKey(line));
  }
  for (const s of restrictionSentences(trimmed)) note(log.restrictions, s, index, foldKey(s));
}

/** Walks the fork once: user text, assistant calls, and each result bound to its call. */
function walkFork(messages: readonly Message[], log: FactLog): Walk {
  const walk: Walk = { goal: '', carried: new Map(), calls: [], resultOf: new Map() };
  // Calls by id, newest last, so a result binds to the latest earlier unanswered call.
  const open = new Map<string, ForkCall[]>();
  const answered = new Set<ForkCall>();
  messages.forEach((m, index) => {
    if (m.role === 'user' && m.toolCallId === undefined) return onUser(walk, log, m, index);
    if (m.role === 'assistant') {
      const text = textOf(m.content).trim();
      if (text !== '') walk.lastAssistantNote = text;
      if (hasToolCalls(m))
        for (const call of m.toolCalls) {
          const fc = { call, index, args: parseArguments(call) };
          walk.calls.push(fc);
          open.set(call.id, [...(open.get(call.id) ?? []), fc]);
        }
      for (const f of aiderEdits(text)) note(log.filesModified, f, index);
      return;
    }
    if (m.role !== 'tool' || m.toolCallId === undefined) return;
    const candidates = open.get(m.toolCallId) ?? [];
    const fc = [...candidates].reverse().find((c) => !answered.has(c));
    if (fc) {
      answered.add(fc);
      walk.resultOf.set(fc, m);
    }
  });
  return walk;
}

/** The label a tool result's facts are shown under: its command (first line) or the paths it names. */
function sourceLabel(fc: ForkCall): string {
  const kind = toolKind(fc.call, fc.args);
  const shown = describeCall(fc.call, fc.args, kind).split('\n')[0];
  return kind === 'shell' || kind === 'read' ? oneLine(shown, 120) : `${fc.call.name} ${oneLine(shown, 100)}`;
}

/** Walks the fork and gathers the facts (deterministic: insertion order only). */
export function extractSessionFacts(messages: readonly Message[]): SessionFacts {
  const log = emptyFactLog();
  const walk = walkFork(messages, log);
  const lastCallIndex = walk.calls.length > 0 ? walk.calls[walk.calls.length - 1].index : -1;
  const sources: OutputSource[] = [];
  for (const fc of walk.calls) {
    const result = walk.resultOf.get(fc);
    const out = result ? textOf(result.content) : '';
    recordCall(log, fc, result, out, fc.index === lastCallIndex);
    if (result && out.trim() !== '') sources.push({ label: sourceLabel(fc), index: fc.index, text: out });
  }
  for (const [id, s] of log.sessions)
    if (s.open)
      note(
        log.pending,
        `session ${id} still running (${s.command}); poll it for output before relying on it`,
        s.index,
      );
  const known = new Set([...log.filesRead.keys(), ...log.filesModified.keys()]);
  return {
    goal: walk.goal,
    laterRequests: [...log.laterRequests.values()],
    restrictions: [...log.restrictions.values()],
    commands: [...log.commands.values()],
    toolFailures: log.toolFailures,
    filesRead: [...log.filesRead.values()],
    filesModified: [...log.filesModified.values()],
    errors: [...log.errors.values()],
    pending: [...log.pending.values()],
    plan: log.plan,
    ...(walk.lastAssistantNote !== undefined ? { lastAssistantNote: walk.lastAssistantNote } : {}),
    outputFacts: collectSourceFacts(sources, known),
    carried: walk.carried,
  };
}
