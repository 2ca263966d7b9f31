import type { Expected, PathStep, Reply } from '../path-types.js';
import { thrown, Walk } from './walk.js';
import { ModelPathError } from '../../core/errors.js';

/*
 * What a two-band summary must do, from the rules: prepare and validate both bands before
 * either provider call (a band that cannot fit fails at no cost), then summarize the older
 * band, then the newer one, each through the capacity-retry ladder. A band that runs out of
 * capacity retries ends the whole summary as exhausted, any other band failure as failed;
 * the summary refs come older first.
 */

interface BandOutcome {
  status: string;
  summaryRefs: string[];
  calls: number;
  failure: unknown;
}

interface Facts {
  bands: BandOutcome[];
  failure: Record<string, unknown> | null;
}

const BAND_STATES = ['summarizingOlderBand', 'summarizingNewerBand'];

function bandDone(w: Walk<Facts>, r: Reply): void {
  const band = (r as { done: BandOutcome }).done;
  w.facts.bands.push(band);
  if (band.status === 'exhausted') return w.go('exhausted');
  if (band.status !== 'done') return w.go('failed');
  w.go(w.here === 'summarizingOlderBand' ? 'summarizingNewerBand' : 'done');
}

/** The hierarchical-summary oracle: input and steps → states, calls, output. */
export function hierarchicalSummaryOracle(_input: unknown, steps: readonly PathStep[]): Expected {
  const w = new Walk<Facts>('preparingBands', { bands: [], failure: null });
  for (const step of steps) {
    if (w.here === 'preparingBands') {
      const failed = thrown(w.reply(step, 'prepareBands'));
      w.facts.failure = failed ? { reason: 'budget', message: failed.message } : null;
      w.go(failed ? 'failed' : 'summarizingOlderBand');
    } else if (BAND_STATES.includes(w.here)) bandDone(w, w.reply(step, 'capacityRetry'));
    else throw new ModelPathError(`the run already ended in ${w.here}`);
  }
  const { bands, failure } = w.facts;
  return w.verdict(['done', 'failed', 'exhausted'], {
    status: w.here,
    summaryRefs: w.here === 'done' ? bands.flatMap((b) => b.summaryRefs) : [],
    calls: bands.reduce((n, b) => n + b.calls, 0),
    failure: failure ?? bands.find((b) => b.status !== 'done')?.failure ?? null,
  });
}
