import { tiktokenCounter } from '../../src/estimate/counters.js';
import type { BenchContext, BenchSection } from './types.js';

// A deterministic generator, so every run counts the same text.
export function randomText(alphabet: string[], length: number, seed = 7): string {
  let x = seed;
  const parts: string[] = [];
  for (let i = 0; i < length; i++) {
    x = (x * 1_103_515_245 + 12_345) >>> 0;
    parts.push(alphabet[x % alphabet.length]!);
  }
  return parts.join('');
}

const CJK = Array.from({ length: 2_000 }, (_, i) => String.fromCodePoint(0x4e00 + i));
const LETTERS = [...'abcdefghijklmnopqrstuvwxyz'];

/** Texts of one character class (issue 15 item 6); each makes `bytes` UTF-8 bytes. */
function cases(bytes: number): Array<[string, () => string]> {
  return [
    ['spaces', () => ' '.repeat(bytes)],
    ['newlines', () => '\n'.repeat(bytes)],
    ['spaces, newlines and tabs (random)', () => randomText([' ', '\n', '\t'], bytes)],
    ["one letter ('a')", () => 'a'.repeat(bytes)],
    ['letters (random)', () => randomText(LETTERS, bytes)],
    ['digits (one)', () => '7'.repeat(bytes)],
    ['punctuation (one)', () => '.'.repeat(bytes)],
    ['CJK (one character)', () => '你'.repeat(Math.floor(bytes / 3))],
    ['CJK (random)', () => randomText(CJK, Math.floor(bytes / 3))],
  ];
}

/** Seconds to count pathological single-class texts; the goal is under 5 s for 10 MB each. */
export function longRuns(ctx: BenchContext): BenchSection {
  const bytes = ctx.quick ? 200_000 : 10_000_000;
  const counter = tiktokenCounter('o200k_base');
  const rows: Array<Array<string | number>> = [];
  for (const [name, make] of cases(bytes)) {
    const text = make();
    const start = performance.now();
    const tokens = counter.count(text);
    const seconds = (performance.now() - start) / 1000;
    rows.push([name, `${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB`, tokens, seconds.toFixed(2)]);
    ctx.log(`estimator: ${name}: ${seconds.toFixed(2)} s`);
  }
  return {
    title: 'Counting long runs of one character class (o200k_base)',
    headers: ['text', 'size', 'tokens', 'seconds'],
    rows,
    notes: [
      'Goal: 10 MB of any one character class in under 5 s with no crash (whitespace runs were quadratic: 320,000 spaces took 101 s).',
      'Repeated windows are remembered, so uniform runs cost little; random runs pay tiktoken’s own per-character cost.',
    ],
  };
}
