import { basename } from 'node:path';
import { counterFor, charsCounter } from '../../src/estimate/counters.js';
import { createEstimator } from '../../src/estimate/estimator.js';
import { createRunningTotal } from './running-total.js';
import { readSessionFile } from '../../src/formats/index.js';
import type { Message } from '../../src/messages/message.js';
import { textOf } from '../../src/messages/message.js';
import { corpusFiles } from './corpus.js';
import { syntheticSession } from './synthetic-session.js';
import { median, nowMs } from './timing.js';
import { longRuns } from './long-runs-bench.js';
import type { BenchContext, BenchSection, BenchSuite } from './types.js';

/** Bytes of text the estimator tokenizes in a message (content, call names/arguments, ids). */
function countedBytes(m: Message): number {
  let n = Buffer.byteLength(textOf(m.content));
  for (const c of m.toolCalls ?? []) n += Buffer.byteLength(c.name) + Buffer.byteLength(c.arguments);
  if (m.toolCallId) n += Buffer.byteLength(m.toolCallId);
  return n;
}

function loadCorpus(ctx: BenchContext): Array<{ file: string; messages: Message[] }> {
  if (!ctx.corpusDir) return [];
  return corpusFiles(ctx.corpusDir)
    .filter((f) => !f.endsWith('.md') || !basename(f).startsWith('SOURCES'))
    .map((file) => ({ file, messages: readSessionFile(file).sessions.flatMap((s) => s.messages) }));
}

function throughput(ctx: BenchContext, corpus: Array<{ file: string; messages: Message[] }>): BenchSection {
  const all = corpus.flatMap((c) => c.messages);
  const mb = all.reduce((s, m) => s + countedBytes(m), 0) / 1e6;
  const e = createEstimator();
  e.text('warm up the encoder');
  let t0 = nowMs();
  const tokens = e.history(all);
  const cold = nowMs() - t0;
  const reps = ctx.quick ? 3 : 10;
  const warm: number[] = [];
  for (let i = 0; i < reps; i++) {
    t0 = nowMs();
    e.history(all);
    warm.push(nowMs() - t0);
  }
  const cached = median(warm);
  return {
    title: 'Estimator throughput over the real session corpus',
    headers: ['pass', 'messages', 'MB', 'tokens', 'ms', 'MB/s', 'speed-up vs cold'],
    rows: [
      ['cold (empty cache)', all.length, mb, tokens, cold, mb / (cold / 1000), 1],
      ['cached (same messages)', all.length, mb, tokens, cached, mb / (cached / 1000), cold / cached],
    ],
    notes: [
      `${corpus.length} files; encoder o200k_base loaded before timing; cached = median of ${reps} passes.`,
    ],
  };
}

function growingSession(ctx: BenchContext): BenchSection {
  const sizes = ctx.quick ? [100, 1_000] : [100, 1_000, 10_000];
  const turns = ctx.quick ? 5 : 20;
  const session = syntheticSession(sizes[sizes.length - 1]);
  // The same appended messages at every size, so only the history length differs.
  const appended = syntheticSession(turns + 2, 7).slice(2);
  const rows: Array<Array<string | number>> = [];
  const counter = counterFor('o200k_base');
  counter.count('warm up');
  for (const size of sizes) {
    const e = createEstimator();
    const rt = createRunningTotal(e);
    const h = session.slice(0, size - 1);
    rt.total(h);
    const perTurn: number[] = [];
    for (let t = 0; t < turns; t++) {
      h.push(appended[t]);
      const t0 = nowMs();
      rt.total(h);
      perTurn.push(nowMs() - t0);
    }
    // Baseline: no cache, re-tokenize the whole history every turn (what a naive agent does).
    const naiveReps = size >= 10_000 ? 1 : 3;
    const naive: number[] = [];
    for (let r = 0; r < naiveReps; r++) {
      const fresh = createEstimator({ textCacheSize: 0 });
      const t0 = nowMs();
      fresh.history(h);
      naive.push(nowMs() - t0);
    }
    const cached = median(perTurn);
    rows.push([size.toLocaleString('en-US'), cached, median(naive), median(naive) / cached]);
  }
  const first = Number(rows[0][1]);
  const last = Number(rows[rows.length - 1][1]);
  return {
    title: 'Per-turn estimation cost of a growing session (one message appended per turn)',
    headers: ['messages', 'cached ms/turn', 'naive ms/turn', 'naive / cached'],
    rows,
    notes: [
      `Synthetic session (~530 tokens/message); cached = running total over the per-message cache, median of ${turns} turns.`,
      `Flatness: cached cost at ${rows[rows.length - 1][0]} messages is ${(last / first).toFixed(2)}× the cost at ${rows[0][0]} (target ≤ 2×).`,
    ],
  };
}

type Kind = 'tool output' | 'assistant text' | 'user text' | 'tool-call arguments' | 'system' | 'CJK text';

const CJK = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/g;

function kindsOf(m: Message): Array<[Kind, string]> {
  const out: Array<[Kind, string]> = [];
  const text = textOf(m.content);
  if (text) {
    const cjk = (text.match(CJK) ?? []).length;
    if (cjk > text.length * 0.2) out.push(['CJK text', text]);
    else if (m.role === 'tool') out.push(['tool output', text]);
    else if (m.role === 'assistant') out.push(['assistant text', text]);
    else if (m.role === 'user') out.push(['user text', text]);
    else out.push(['system', text]);
  }
  for (const c of m.toolCalls ?? []) out.push(['tool-call arguments', c.arguments]);
  return out;
}

function fallbackError(corpus: Array<{ file: string; messages: Message[] }>): BenchSection {
  const real = counterFor('o200k_base');
  const acc = new Map<Kind, { real: number; est: number; n: number; errs: number[] }>();
  for (const { messages } of corpus)
    for (const m of messages)
      for (const [kind, text] of kindsOf(m)) {
        if (text.length === 0) continue;
        const r = real.count(text);
        if (r === 0) continue;
        const est = charsCounter.count(text);
        const a = acc.get(kind) ?? { real: 0, est: 0, n: 0, errs: [] };
        a.real += r;
        a.est += est;
        a.n++;
        a.errs.push(Math.abs(est - r) / r);
        acc.set(kind, a);
      }
  const rows = [...acc.entries()]
    .sort((x, y) => y[1].real - x[1].real)
    .map(([kind, a]) => {
      const sorted = [...a.errs].sort((p, q) => p - q);
      return [
        kind,
        a.n,
        a.real,
        a.est,
        `${(((a.est - a.real) / a.real) * 100).toFixed(1)}%`,
        `${(median(a.errs) * 100).toFixed(1)}%`,
        `${(sorted[Math.floor(sorted.length * 0.9)] * 100).toFixed(1)}%`,
      ];
    });
  return {
    title: 'Error of the chars fallback (ceil(UTF-8 bytes / 4)) against o200k_base, by content kind',
    headers: [
      'content kind',
      'texts',
      'real tokens',
      'fallback tokens',
      'total error',
      'median |error|',
      'p90 |error|',
    ],
    rows,
    notes: ['Negative total error = the fallback undercounts (the budget would be overrun).'],
  };
}

/** Estimator benchmarks: corpus throughput, a growing session, the fallback's error, long runs. */
export const estimatorSuite: BenchSuite = {
  name: 'estimator',
  async run(ctx) {
    const corpus = loadCorpus(ctx);
    const sections: BenchSection[] = [];
    if (corpus.length > 0) sections.push(throughput(ctx, corpus));
    else ctx.log('estimator: no session files in the corpus; skipping corpus sections');
    sections.push(growingSession(ctx));
    if (corpus.length > 0) sections.push(fallbackError(corpus));
    sections.push(longRuns(ctx));
    return sections;
  },
};
