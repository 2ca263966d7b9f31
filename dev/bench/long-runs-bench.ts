import { tiktokenCounter } from '../../src/estimate/counters.js';
import { prng } from './synthetic-session.js';
import type { BenchContext, BenchSection } from './types.js';

/**
 * Deterministic random text over `alphabet`. mulberry32 rather than a bare LCG: an LCG's low
 * bits repeat with a short period, so `x % n` made periodic "random" text whose windows the
 * counter's memo recognised, and the bench under-reported the cost of truly random runs.
 */
export function randomText(alphabet: string[], length: number, seed = 7): string {
  const rand = prng(seed);
  const parts: string[] = [];
  for (let i = 0; i < length; i++) parts.push(alphabet[Math.floor(rand() * alphabet.length)]!);
  return parts.join('');
}

const CJK = Array.from({ length: 2_000 }, (_, i) => String.fromCodePoint(0x4e00 + i));
const EMOJI = Array.from({ length: 50 }, (_, i) => String.fromCodePoint(0x1f600 + i));
const LETTERS = [...'abcdefghijklmnopqrstuvwxyz'];
const WORDS = ['the ', 'budget ', 'session ', 'request ', 'keeps ', 'within ', 'window. ', 'tool ', '\n'];

/** Texts of one character class; each makes about `bytes` UTF-8 bytes. */
function cases(bytes: number): Array<[string, () => string]> {
  return [
    ['spaces', () => ' '.repeat(bytes)],
    ['newlines', () => '\n'.repeat(bytes)],
    ['spaces, newlines and tabs (random)', () => randomText([' ', '\n', '\t'], bytes)],
    ["one letter ('a')", () => 'a'.repeat(bytes)],
    ['letters a-z (random)', () => randomText(LETTERS, bytes)],
    ['digits (one)', () => '7'.repeat(bytes)],
    ['digits (random)', () => randomText([...'0123456789'], bytes)],
    ['punctuation (one)', () => '.'.repeat(bytes)],
    ['punctuation (random)', () => randomText([...'.,;:!?-_/()[]{}'], bytes)],
    ['CJK (one character)', () => '你'.repeat(Math.floor(bytes / 3))],
    ['CJK (random)', () => randomText(CJK, Math.floor(bytes / 3))],
    ['emoji (random)', () => randomText(EMOJI, Math.floor(bytes / 4))],
  ];
}

function timeCount(count: (t: string) => number, text: string): { tokens: number; seconds: number } {
  const start = performance.now();
  const tokens = count(text);
  return { tokens, seconds: (performance.now() - start) / 1000 };
}

/**
 * Seconds to count pathological single-class texts; the goal is under 5 s for 10 MB each.
 * Baseline: ordinary prose of the same size counted in the same run, so "× prose" says how
 * much dearer a class is than text tiktoken handles well, whatever the machine's load.
 */
export function longRuns(ctx: BenchContext): BenchSection {
  const bytes = ctx.quick ? 200_000 : 10_000_000;
  const counter = tiktokenCounter('o200k_base');
  const count = (t: string): number => counter.count(t);
  count('warm up the encoder');
  const prose = timeCount(count, randomText(WORDS, Math.floor(bytes / 7)));
  const rows: Array<Array<string | number>> = [
    ['baseline: ordinary prose', `${(bytes / 1e6).toFixed(1)} MB`, prose.tokens, prose.seconds.toFixed(2), 1],
  ];
  let worst = 0;
  for (const [name, make] of cases(bytes)) {
    const text = make();
    const r = timeCount(count, text);
    worst = Math.max(worst, r.seconds);
    const size = `${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB`;
    rows.push([name, size, r.tokens, r.seconds.toFixed(2), r.seconds / prose.seconds]);
    ctx.log(`estimator: ${name}: ${r.seconds.toFixed(2)} s`);
  }
  return {
    title: 'Counting long runs of one character class (o200k_base)',
    headers: ['text', 'size', 'tokens', 'seconds', '× prose'],
    rows,
    notes: [
      `Goal: 10 MB of any one character class in under 5 s with no crash; slowest here ${worst.toFixed(2)} s (${ctx.quick ? 'quick run: 0.2 MB' : worst < 5 ? 'met' : 'MISSED'}). Whitespace runs were quadratic: 320,000 spaces took 101 s.`,
      'Long runs are counted in 64-character windows (256 when a window holds too few tokens); repeated windows are remembered, so uniform runs cost little and random runs pay one tokenizer call per window, several times the cost of prose (the × prose column).',
    ],
  };
}
