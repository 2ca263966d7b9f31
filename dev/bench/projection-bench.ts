import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { BenchContext, BenchSection, BenchSuite } from './types.js';

const PROBE = fileURLToPath(new URL('./projection-probe.ts', import.meta.url));

const ProbeResultSchema = z.object({
  messages: z.number(),
  tokens: z.number(),
  coldMs: z.number(),
  coldCpuMs: z.number(),
  warmMs: z.number(),
  warmCpuMs: z.number(),
  naiveMs: z.number().nullable(),
  projectedTokens: z.number(),
  peakRssMb: z.number(),
});
const CorpusProbeSchema = z.object({
  rows: z.array(
    z.object({
      session: z.string(),
      messages: z.number(),
      tokens: z.number(),
      turns: z.number(),
      coldMs: z.number(),
      warmMs: z.number(),
      naiveMs: z.number(),
    }),
  ),
  peakRssMb: z.number(),
});

/** Runs the probe in a fresh Node process (tsx loader) so its peak RSS is its own. */
function runProbe(args: string[]): unknown {
  const out = spawnSync(process.execPath, ['--import', 'tsx', PROBE, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (out.status !== 0)
    throw new Error(`projection probe ${args.join(' ')} failed: ${out.stderr.slice(-2000)}`);
  return JSON.parse(out.stdout.trim().split('\n').pop() ?? 'null');
}

/** Linearity goal: from 10,000 to 50,000 messages (5×) cold and warm projection may grow at most this much. */
export const LINEARITY_GOAL = 5.5;

type ProbeResult = z.infer<typeof ProbeResultSchema>;

/** How much cold and warm projection grew from the smaller to the larger size (wall and CPU). */
function linearityNote(small: ProbeResult, large: ProbeResult): string {
  const x = (a: number, b: number): string => `${(b / a).toFixed(1)}×`;
  const verdict = (a: number, b: number): string => (b / a <= LINEARITY_GOAL ? 'met' : 'MISSED');
  return (
    `Linearity, ${small.messages.toLocaleString('en-US')} → ${large.messages.toLocaleString('en-US')} messages (${x(small.messages, large.messages)}): ` +
    `cold ${x(small.coldMs, large.coldMs)} wall, ${x(small.coldCpuMs, large.coldCpuMs)} CPU; ` +
    `warm per turn ${x(small.warmMs, large.warmMs)} wall, ${x(small.warmCpuMs, large.warmCpuMs)} CPU ` +
    `(goal at most ${LINEARITY_GOAL}× for 5×: cold ${verdict(small.coldCpuMs, large.coldCpuMs)}, warm ${verdict(small.warmCpuMs, large.warmCpuMs)}, by CPU time). ` +
    `Load average now: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')}.`
  );
}

/** Warm per-turn target of the issue for the 10,000-message session (ms) and its memory ceiling (MB). */
export const WARM_TARGET_MS = 20;
export const PEAK_RSS_TARGET_MB = 600;

function syntheticSection(ctx: BenchContext): BenchSection {
  const sizes = ctx.quick ? [1_000, 5_000] : [1_000, 5_000, 10_000, 50_000];
  const turns = ctx.quick ? 5 : 20;
  const rows: Array<Array<string | number>> = [];
  const results = sizes.map((size) => {
    ctx.log(`bench: projection probe, ${size} messages…`);
    // One naive turn re-tokenizes the whole session: once is enough, and at 50,000 messages
    // (26M tokens) the cold column already is that work.
    return ProbeResultSchema.parse(runProbe([String(size), String(turns), size >= 50_000 ? '0' : '1']));
  });
  for (const r of results)
    rows.push([
      r.messages.toLocaleString('en-US'),
      r.tokens,
      r.coldMs,
      r.coldCpuMs,
      r.warmMs,
      r.warmCpuMs,
      (r.warmMs / r.messages) * 1_000,
      r.naiveMs ?? '—',
      r.naiveMs === null ? '—' : r.naiveMs / r.warmMs,
      r.peakRssMb,
    ]);
  const ten = results.find((r) => r.messages === 10_000);
  const fifty = results.find((r) => r.messages === 50_000);
  const pair = ten && fifty ? [ten, fifty] : [results[0], results[results.length - 1]];
  const notes = [
    `Synthetic session (syntheticSession, ~530 tokens/message); limits: 200k window, 8k reserved output (clearing trigger 40,000). Each size runs in its own Node process; peak RSS = process.resourceUsage().maxRSS of that process (tokenizer and generated session included).`,
    `warm = median of ${turns} turns, each appending one tool batch (assistant + results) and projecting with the same estimator (cached estimates, memoized stubs). naive = the same projection with a fresh estimator (no caches), i.e. re-tokenizing everything every turn; measured in the same process, one turn, not at 50,000 messages (there the cold projection is the same work).`,
    'Linearity: "warm µs per 1k messages" stays flat when cost grows linearly with history length.',
  ];
  if (pair[0] && pair[1] && pair[0] !== pair[1]) notes.push(linearityNote(pair[0], pair[1]));
  if (ten)
    notes.push(
      `10,000-message session: warm ${ten.warmMs.toFixed(1)} ms/turn, ${ten.warmCpuMs.toFixed(1)} ms CPU (target < ${WARM_TARGET_MS} ms: ${ten.warmMs < WARM_TARGET_MS ? 'met' : 'MISSED'} by wall, ${ten.warmCpuMs < WARM_TARGET_MS ? 'met' : 'MISSED'} by CPU), peak RSS ${ten.peakRssMb.toFixed(0)} MB (target < ${PEAK_RSS_TARGET_MB} MB: ${ten.peakRssMb < PEAK_RSS_TARGET_MB ? 'met' : 'MISSED'}).`,
    );
  return {
    title: 'Projection of a growing synthetic session: cold, warm per turn, naive baseline, peak memory',
    headers: [
      'messages',
      'tokens',
      'cold ms',
      'cold CPU ms',
      'warm ms/turn',
      'warm CPU ms/turn',
      'warm ms per 1k msgs',
      'naive ms/turn',
      'naive / warm',
      'peak RSS MB',
    ],
    rows,
    notes,
  };
}

function corpusSection(ctx: BenchContext): BenchSection | null {
  if (!ctx.corpusDir) return null;
  ctx.log('bench: projection probe, real corpus…');
  const r = CorpusProbeSchema.parse(runProbe(['corpus', ctx.corpusDir]));
  return {
    title: 'Projection of every real session in the shared corpus',
    headers: [
      'session',
      'messages',
      'tokens',
      'turns',
      'cold ms',
      'warm ms/turn',
      'naive ms/turn',
      'naive / warm',
    ],
    rows: r.rows.map((x) => [
      x.session,
      x.messages,
      x.tokens,
      x.turns,
      x.coldMs,
      x.warmMs,
      x.naiveMs,
      x.warmMs > 0 ? x.naiveMs / x.warmMs : 0,
    ]),
    notes: [
      'cold = whole session projected with an empty estimator; warm = median over turns (each assistant message) of projecting the history before it with a warm estimator; naive = the last turn projected with a fresh estimator.',
      `Peak RSS of the corpus probe process: ${r.peakRssMb.toFixed(0)} MB.`,
    ],
  };
}

/** Projection performance (issue: projection performance). */
export const projectionSuite: BenchSuite = {
  name: 'projection',
  run(ctx) {
    const sections = [syntheticSection(ctx)];
    const corpus = corpusSection(ctx);
    if (corpus) sections.push(corpus);
    return Promise.resolve(sections);
  },
};
