import type { InspectionEvent } from 'xstate';

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
