import type { InspectionEvent } from 'xstate';
import { UserError } from '../core/errors.js';
import type { WaitingInfo } from '../providers/http-limits.js';

/** A progress display fed by machine inspection events. */
export interface Progress {
  /** Pass to the runner's `inspect` hook (a no-op when progress is off). */
  inspect(event: InspectionEvent): void;
  /** A one-off note on the progress line (e.g. a provider retry). */
  note(text: string): void;
  /** Clears the line; call once when the work is over. */
  done(): void;
}

/** Machine ids whose state changes are shown, with the prefix each gets. */
const SHOWN: Record<string, string> = {
  turn: '',
  compaction: 'compacting',
  capacityRetry: 'summary',
  hierarchicalSummary: 'summary',
};

/** `{ working: 'clearing' }` → `clearing`; `{ local: 'summarizingFlat' }` → `local › summarizingFlat`. */
export function stateLabel(value: unknown): string {
  const parts: string[] = [];
  let v = value;
  while (typeof v === 'object' && v !== null) {
    const [key, inner] = Object.entries(v as Record<string, unknown>)[0] ?? [];
    if (key === undefined) break;
    if (key !== 'working') parts.push(key);
    v = inner;
  }
  if (typeof v === 'string' && v !== 'working') parts.push(v);
  return parts.join(' › ');
}

const CLEAR_LINE = '\r\x1b[2K';

/**
 * Progress on stderr: one updating line per machine state (syncing, normalizing, clearing,
 * estimating, compacting …) with the elapsed time. Only when `enabled` (stderr is a
 * terminal); otherwise every method does nothing, so piped stderr stays empty.
 */
export function createProgress(
  stderr: NodeJS.WritableStream,
  enabled: boolean,
  now: () => number = () => Date.now(),
): Progress {
  if (!enabled) return { inspect: () => undefined, note: () => undefined, done: () => undefined };
  const started = now();
  let shown = false;
  let last = '';
  const show = (text: string): void => {
    const seconds = ((now() - started) / 1000).toFixed(1);
    stderr.write(`${CLEAR_LINE}compactor: ${text} (${seconds}s)`);
    shown = true;
  };
  return {
    inspect(event) {
      if (event.type !== '@xstate.snapshot') return;
      // Machines carry their definition id on `logic`; promise actors have none and are skipped.
      const machine = (event.actorRef as { logic?: { id?: unknown } }).logic?.id;
      if (typeof machine !== 'string' || !(machine in SHOWN)) return;
      const s = event.snapshot as { status?: string; value?: unknown };
      if (s.status !== 'active' || s.value === undefined) return;
      const state = stateLabel(s.value);
      const prefix = SHOWN[machine];
      const text = prefix ? `${prefix} › ${state}` : state;
      if (text === '' || text === last) return;
      last = text;
      show(text);
    },
    note(text) {
      show(text);
    },
    done() {
      if (shown) stderr.write(CLEAR_LINE);
      shown = false;
    },
  };
}

/** `waiting for openai gpt-5.1: attempt 2/4, 31 s` (a provider request still in flight). */
export function waitingLine(w: WaitingInfo): string {
  return `waiting for ${w.provider} ${w.model}: attempt ${w.attempt}/${w.attempts}, ${Math.round(w.elapsedMs / 1000)} s`;
}

/**
 * Interval of the waiting lines: 15 s, or `COMPACTOR_PROGRESS_INTERVAL_MS` (undocumented; lets
 * tests see a line without waiting 15 s).
 */
export function progressIntervalMs(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.COMPACTOR_PROGRESS_INTERVAL_MS;
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 86_400_000)
    throw new UserError(
      `COMPACTOR_PROGRESS_INTERVAL_MS: expected milliseconds between 1 and 86400000 (got ${JSON.stringify(raw.slice(0, 40))})`,
    );
  return Number(raw);
}
