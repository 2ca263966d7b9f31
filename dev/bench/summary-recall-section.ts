import { OFFLINE_MODEL } from '../../src/summary/offline/offline-summarizer.js';
import type { CorpusSession } from './corpus-sessions.js';
import type { PolicyRun } from './retention-runs.js';
import type { BenchSection } from './types.js';

/** Needed results that were compacted away, and how many of them the summary still carried. */
interface Carried {
  compacted: number;
  carried: number;
}

function carriedIn(run: PolicyRun, keep: (i: number) => boolean): Carried {
  const out: Carried = { compacted: 0, carried: 0 };
  run.perSession.forEach((s, i) => {
    if (!s.ok || !keep(i)) return;
    out.compacted += s.result.totals.compactedNeeded;
    out.carried += s.result.totals.summaryRecalled;
  });
  return out;
}

const cell = (c: Carried) =>
  c.compacted === 0 ? '—' : `${c.carried}/${c.compacted} (${((100 * c.carried) / c.compacted).toFixed(1)}%)`;

/** Compactions with a receipt and those amended, per window, over the policies `pick` keeps. */
function receiptCounts(
  all: ReadonlyMap<number, readonly PolicyRun[]>,
  pick: (policy: string) => boolean,
): string[] {
  const out: string[] = [];
  for (const [window, runs] of all) {
    let compactions = 0;
    let amended = 0;
    for (const r of runs.filter((run) => pick(run.policy.name)))
      for (const s of r.perSession)
        if (s.ok) {
          compactions += s.result.totals.receiptCompactions;
          amended += s.result.totals.amendedCompactions;
        }
    if (compactions > 0)
      out.push(
        `${window / 1000}k ${amended}/${compactions} (${((100 * amended) / compactions).toFixed(1)}%)`,
      );
  }
  return out;
}

/**
 * Summary recall on its own: for every window and every policy that
 * compacted a result a later turn needed, how many of those results the summary still
 * carried (the path, identifier, code or error line the turn used), real and synthetic
 * sessions apart. The policies' recall already counts these as recalled.
 */
export function summaryRecallSection(
  all: ReadonlyMap<number, readonly PolicyRun[]>,
  sessions: readonly CorpusSession[],
): BenchSection {
  const rows: Array<Array<string | number>> = [];
  const receipts = receiptCounts(all, () => true);
  const defaults = receiptCounts(all, (name) => name === 'compactor');
  for (const [window, runs] of all)
    for (const r of runs) {
      const every = carriedIn(r, () => true);
      if (every.compacted === 0) continue;
      const real = carriedIn(r, (i) => !sessions[i].synthetic);
      const synthetic = carriedIn(r, (i) => sessions[i].synthetic === true);
      rows.push([`${window / 1000}k`, r.policy.name, cell(real), cell(synthetic), cell(every)]);
    }
  return {
    title: 'Summary recall: needed results that were compacted, and how many the summary still carried',
    headers: ['window', 'policy', 'real sessions', 'synthetic sessions', 'all'],
    rows,
    notes: [
      `Summarizer: the embedded offline summarizer (${OFFLINE_MODEL}), the default. A needed result counts as carried when a summary in the request holds, verbatim, one of the facts the turn used from it; a needed re-read (no fact) never does.`,
      'A real model summarizer was not measured: no test model is reachable from this machine (no network), and the bench makes no provider calls.',
      `Receipts, compactions whose summary lacked an item and had it added verbatim, all policies: ${receipts.join(', ') || 'no compactions'}; the defaults (compactor): ${defaults.join(', ') || 'no compactions'}. A path, command or id counts as kept when a pointer line or the list the summary's span id returns names it; a request, correction or error only when the summary or a kept message says it.`,
    ],
  };
}
