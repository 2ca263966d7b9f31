import { basename } from 'node:path';
import { freeEncoders } from '../../src/estimate/counters.js';
import { readSessionFile } from '../../src/formats/index.js';
import { createEstimator } from '../../src/estimate/estimator.js';
import type { Message } from '../../src/messages/message.js';
import { projectRequest } from '../../src/projection/project-request.js';
import type { Limits } from '../../src/projection/budgets.js';
import { corpusFiles } from './corpus.js';
import { syntheticSession } from './synthetic-session.js';
import { median, nowMs, peakRssMb } from './timing.js';

/** Limits of the projection benchmark: a 200k window with 8k reserved (trigger 40,000). */
export const PROBE_LIMITS: Limits = { capacity: 200_000, reservedOutput: 8_000 };

/** What one probe process measured for one session size. */
export interface ProbeResult {
  messages: number;
  tokens: number;
  /** First projection with an empty estimator cache (ms). */
  coldMs: number;
  /** CPU time (user + system) of the cold projection (ms). */
  coldCpuMs: number;
  /** Median per-turn projection after appending one batch, caches warm (ms). */
  warmMs: number;
  /** Median CPU time of those turns (ms). */
  warmCpuMs: number;
  /** Per-turn projection with a fresh estimator each turn (the naive baseline, ms); null when not measured. */
  naiveMs: number | null;
  /** Projected tokens of the last request. */
  projectedTokens: number;
  /** Peak resident set size of the whole probe process (MB). */
  peakRssMb: number;
}

/** CPU time (user + system) of this process so far, in ms. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1_000;
}

/** One appended turn: an assistant batch and its results (taken from a differently seeded session). */
function appendedBatches(count: number): Message[][] {
  const extra = syntheticSession(count * 8 + 2, 7).slice(2);
  const out: Message[][] = [];
  for (let i = 0; i < extra.length && out.length < count; i++) {
    const m = extra[i];
    if (m.role !== 'assistant' || !m.toolCalls) continue;
    const batch = [m];
    for (let j = i + 1; j < extra.length && extra[j].role === 'tool'; j++) batch.push(extra[j]);
    if (batch.length === m.toolCalls.length + 1) out.push(batch);
  }
  return out;
}

/**
 * Measures projection of a synthetic session of `size` messages: cold, warm per turn
 * (one batch appended, estimates cached) and naive per turn (fresh estimator). Runs in
 * its own process (see projection-bench.ts) so peak RSS belongs to this size alone.
 */
export function probeProjection(size: number, turns: number, naiveReps: number): ProbeResult {
  const history = syntheticSession(size);
  const est = createEstimator();
  est.text('warm up the encoder');
  let t0 = nowMs();
  let c0 = cpuMs();
  let projected = projectRequest(history, { limits: PROBE_LIMITS, estimator: est });
  const coldMs = nowMs() - t0;
  const coldCpuMs = cpuMs() - c0;
  const tokens = projected.diagnostics.originalTokens;

  const batches = appendedBatches(turns + naiveReps);
  const warm: number[] = [];
  const warmCpu: number[] = [];
  for (let t = 0; t < turns; t++) {
    history.push(...batches[t]);
    t0 = nowMs();
    c0 = cpuMs();
    projected = projectRequest(history, { limits: PROBE_LIMITS, estimator: est });
    warm.push(nowMs() - t0);
    warmCpu.push(cpuMs() - c0);
  }
  const naive: number[] = [];
  for (let r = 0; r < naiveReps; r++) {
    history.push(...batches[turns + r]);
    const fresh = createEstimator({ textCacheSize: 0 });
    t0 = nowMs();
    projectRequest(history, { limits: PROBE_LIMITS, estimator: fresh });
    naive.push(nowMs() - t0);
  }
  return {
    messages: size,
    tokens,
    coldMs,
    coldCpuMs,
    warmMs: median(warm),
    warmCpuMs: median(warmCpu),
    naiveMs: naive.length > 0 ? median(naive) : null,
    projectedTokens: projected.diagnostics.projectedTokens,
    peakRssMb: peakRssMb(),
  };
}

/** One real session's projection timings. */
export interface CorpusProbeRow {
  session: string;
  messages: number;
  tokens: number;
  turns: number;
  coldMs: number;
  warmMs: number;
  naiveMs: number;
}

/**
 * Projects every session of every corpus file: cold (empty estimator), warm per turn (the
 * history before each assistant message, one shared estimator, in order) and naive (the
 * final history with a fresh estimator).
 */
export function probeCorpus(dir: string): { rows: CorpusProbeRow[]; peakRssMb: number } {
  const rows: CorpusProbeRow[] = [];
  createEstimator().text('warm up the encoder');
  for (const file of corpusFiles(dir)) {
    const imported = readSessionFile(file);
    imported.sessions.forEach((s, k) => {
      const h = s.messages;
      let t0 = nowMs();
      const cold = projectRequest(h, { limits: PROBE_LIMITS, estimator: createEstimator() });
      const coldMs = nowMs() - t0;
      const est = createEstimator();
      const warm: number[] = [];
      for (let i = 0; i < h.length; i++) {
        if (h[i].role !== 'assistant') continue;
        const prefix = h.slice(0, i);
        t0 = nowMs();
        projectRequest(prefix, { limits: PROBE_LIMITS, estimator: est });
        warm.push(nowMs() - t0);
      }
      t0 = nowMs();
      projectRequest(h, { limits: PROBE_LIMITS, estimator: createEstimator({ textCacheSize: 0 }) });
      const naiveMs = nowMs() - t0;
      const name = imported.sessions.length > 1 ? `${basename(file)}#${k}` : basename(file);
      rows.push({
        session: name,
        messages: h.length,
        tokens: cold.diagnostics.originalTokens,
        turns: warm.length,
        coldMs,
        warmMs: warm.length > 0 ? median(warm) : 0,
        naiveMs,
      });
    });
  }
  return { rows, peakRssMb: peakRssMb() };
}

// Child-process entry: `projection-probe.ts SIZE TURNS NAIVE_REPS` or `projection-probe.ts
// corpus DIR` prints one JSON line.
if (process.argv[1] && /projection-probe\.ts$/.test(process.argv[1])) {
  const args = process.argv.slice(2);
  const result =
    args[0] === 'corpus'
      ? probeCorpus(args[1])
      : probeProjection(Number(args[0]), Number(args[1]), Number(args[2]));
  freeEncoders();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
