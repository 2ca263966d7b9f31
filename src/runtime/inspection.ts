import { appendFileSync } from 'node:fs';
import type { InspectionEvent } from 'xstate';
import { redactSecrets } from '../core/redact.js';
import { headUnits } from '../core/text.js';

/** One JSONL record: what happened to which actor, with message arrays reduced to counts. */
export interface InspectionRecord {
  /** When the event happened (ISO 8601, UTC), so a log can be read against other logs. */
  at?: string;
  type: '@xstate.actor' | '@xstate.event' | '@xstate.snapshot';
  /** Actor id (the invoke id, e.g. `compaction`; the root's is generated). */
  actor: string;
  root: string;
  event?: unknown;
  source?: string;
  status?: string;
  value?: unknown;
  context?: unknown;
}

const MAX_STRING = 200;
const MAX_DEPTH = 6;

function isMessageLike(v: unknown): boolean {
  return typeof v === 'object' && v !== null && 'role' in v && 'content' in v;
}

/**
 * Makes a value safe to log: arrays of messages become `{ messages: n }`, long strings are cut,
 * secrets are redacted, errors become their (redacted) message, depth is bounded.
 */
export function summarizeForLog(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    const s = redactSecrets(value);
    return s.length > MAX_STRING ? `${headUnits(s, MAX_STRING)}… (${s.length} chars)` : s;
  }
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? '[function]' : value;
  if (depth >= MAX_DEPTH) return '[…]';
  if (value instanceof Error)
    return { error: value.name, message: summarizeForLog(value.message, depth + 1) };
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every(isMessageLike)) return { messages: value.length };
    return value.slice(0, 50).map((v) => summarizeForLog(v, depth + 1));
  }
  if (isMessageLike(value)) return { message: (value as { role: string }).role };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'signal' || k.startsWith('_')) continue;
    out[k] =
      /(api[_-]?key|authorization|secret|password|token)$/i.test(k) && typeof v === 'string'
        ? '[REDACTED]'
        : summarizeForLog(v, depth + 1);
  }
  return out;
}

/** Turns an inspection event into a {@link InspectionRecord}, or undefined for event kinds not logged. */
export function toInspectionRecord(event: InspectionEvent): InspectionRecord | undefined {
  // `id` exists on real actor refs (the invoke id); fall back to the session id.
  const ref = event.actorRef as { id?: string; sessionId: string };
  const actor = ref.id ?? ref.sessionId;
  const root = event.rootId;
  switch (event.type) {
    case '@xstate.actor':
      return { type: event.type, actor, root };
    case '@xstate.event':
      return {
        type: event.type,
        actor,
        root,
        source: (event.sourceRef as { id?: string } | undefined)?.id,
        event: summarizeForLog(event.event),
      };
    case '@xstate.snapshot': {
      const s = event.snapshot as { status?: string; value?: unknown; context?: unknown };
      return {
        type: event.type,
        actor,
        root,
        status: s.status,
        value: s.value,
        context: summarizeForLog(s.context),
      };
    }
    default:
      return undefined;
  }
}

/**
 * An inspection observer that writes one JSON line per `@xstate.actor` / `@xstate.event` /
 * `@xstate.snapshot` to `sink` (a function, or a file path appended to). Pass it as the
 * runner's `inspect` option. Sink failures never disturb the machines.
 */
export function createJsonlInspector(
  sink: string | ((line: string) => void),
): (event: InspectionEvent) => void {
  const write = typeof sink === 'string' ? (line: string) => appendFileSync(sink, line) : sink;
  return (event) => {
    const record = toInspectionRecord(event);
    if (!record) return;
    try {
      write(`${JSON.stringify({ at: new Date().toISOString(), ...record })}\n`);
    } catch {
      /* logging must not break a turn */
    }
  };
}
