import { afterAll, describe, expect, it } from '@jest/globals';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORPUS_ENV } from '#dev/bench/corpus.js';
import { SWEEP_WINDOWS } from '#dev/bench/retention-bench.js';
import { runBench, type BenchIo } from '#dev/bench/run-bench.js';
import { freeEncoders } from '#src/estimate/index.js';

afterAll(freeEncoders);

const FORMATS = fileURLToPath(new URL('../../fixtures/formats', import.meta.url));

function io(env: NodeJS.ProcessEnv): BenchIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, env, stdout: (t) => out.push(t), stderr: (t) => err.push(t) };
}

/** The Markdown table under a `## title` heading of the report (heading line to the next blank line after it). */
function table(report: string, titleStart: string): string {
  const at = report.indexOf(`## ${titleStart}`);
  expect(at).toBeGreaterThanOrEqual(0);
  const body = report.slice(at);
  const end = body.indexOf('\n\n', body.indexOf('|'));
  return body.slice(0, end < 0 ? undefined : end);
}

describe('bench report: what it promises to show', () => {
  it('§14: --report on a corpus from COMPACTOR_CORPUS writes the 6-window sweep (8k to 200k) with firing counts, the cost columns, summary calls per 10 turns, the tuning/check split, how sure each difference from the defaults is, and the speed ratio', async () => {
    const corpus = mkdtempSync(join(tmpdir(), 'bench-corpus-'));
    const out = mkdtempSync(join(tmpdir(), 'bench-out-'));
    try {
      for (const f of [
        'claude-code-small.jsonl',
        'codex-rollout.jsonl',
        'gemini-stream.jsonl',
        'anthropic.json',
      ])
        copyFileSync(join(FORMATS, f), join(corpus, f));
      const a = io({ [CORPUS_ENV]: corpus });
      // Default windows (no --quick, no --windows); no synthetic sessions keeps it small.
      expect(await runBench(['--only', 'retention', '--synthetic', '0', '--report', join(out, 'r')], a)).toBe(
        0,
      );
      // Beside another suite the pilot runs in its own process; its sections still land in the report.
      expect(
        await runBench(
          ['--only', 'retention,speed', '--quick', '--synthetic', '0', '--report', join(out, 's')],
          a,
        ),
      ).toBe(0);
      const report = readFileSync(join(out, 'r', 'report.md'), 'utf8');
      const speed = readFileSync(join(out, 's', 'report.md'), 'utf8');

      expect(SWEEP_WINDOWS).toEqual([8_000, 16_000, 32_000, 64_000, 128_000, 200_000]);
      const firing = table(report, 'How often each policy fired');
      expect(firing).toContain(
        '| policy | 8k | 16k | 32k | 64k | 128k | 200k | best share | ≥ 1/3 somewhere |',
      );
      const n = table(report, 'Corpus and the fixed tuning/check split')
        .split('\n')
        .filter((l) => /\| (tuning|check) \|$/.test(l)).length;
      for (const p of ['anthropic-clear', 'langchain-clear', 'opencode-prune', 'gemini-mask', 'ai-sdk-prune'])
        expect(firing).toMatch(new RegExp(`\\| ${p} (\\| \\d+/${n} ){6}\\| [\\d.]+% \\| (yes|NO) \\|`));
      // The one-third goal is the peers'; the defaults keep tool results until compaction by design.
      for (const p of ['no-clearing', 'compactor'])
        expect(firing).toMatch(new RegExp(`\\| ${p} (\\| \\d+/${n} ){6}\\| [\\d.]+% \\| — \\|`));
      expect(report).toMatch(
        /Every peer policy .*acts on at least a third of the sessions at some window: (yes|NO)/,
      );
      const headline = table(report, 'Headline: check half');
      expect(headline).toContain('| policy | 8k | 16k | 32k | 64k | 128k | 200k |');
      // Each cell ends with the summary calls per 10 turns.
      expect(headline).toMatch(/\| compactor \|( [\d.]+%, [\d.]+M, \$[\d.]+, [\d.]+\/10( \*)?[^|]* \|){6}/);
      for (const w of ['8k', '16k', '32k', '64k', '128k', '200k'])
        for (const half of ['check', 'tuning']) {
          const t = table(report, `Retention and cost, ${half} half, window ${w} `);
          for (const col of [
            'cache read',
            'cache write',
            '$ anthropic',
            '$ openai',
            '$ gemini',
            'summary calls / 10 turns',
            'fired on',
          ])
            expect(t.split('\n')[2]).toContain(`| ${col} |`);
          // How sure each difference from the defaults is, in plain words.
          const sure = table(
            report,
            `How sure: the defaults against each other setting and policy, ${half} half, window ${w}`,
          );
          expect(sure).toContain(
            '| other policy | recall: defaults − other | recall (defaults) | cost: defaults − other (anthropic) | cost (defaults) | sessions |',
          );
          const verdict = '(better|worse|within noise)';
          expect(sure).toMatch(
            new RegExp(
              `\\| no-clearing \\| [+−]?[\\d.]+ pt \\(.+ to .+\\) \\| ${verdict} \\| [+−]?\\$[\\d.]+ \\(.+ to .+\\) \\| ${verdict} \\| \\d+ \\|`,
            ),
          );
        }
      // The report names its pick and says whether it is the library's defaults; the
      // previous defaults (the wait by expected cost) are scored beside them.
      expect(report).toMatch(/Chosen: [\w.-]+( \(the library defaults\)| — NOT the library defaults)\./);
      expect(report).toMatch(
        /Tuning scores .*; compactor \d+ \([\d.]+%\); compactor-wait-by-cost \d+ \([\d.]+%\);/,
      );
      const split = table(report, 'Corpus and the fixed tuning/check split');
      expect(report).toContain(`Corpus: ${corpus}`);
      const rows = split.split('\n').filter((l) => /\| (tuning|check) \|$/.test(l));
      expect(rows).toHaveLength(n);
      expect(n).toBeGreaterThanOrEqual(4);
      expect(rows.some((r) => r.endsWith('| tuning |'))).toBe(true);
      expect(rows.some((r) => r.endsWith('| check |'))).toBe(true);

      expect(speed).toMatch(
        /1,000 messages: Compactor projectRequest, defaults \(preset compactor\) warm [\d.]+ ms\/turn vs fastest peer \(.+?\) [\d.]+ ms\/turn: ratio [\d.]+/,
      );
      expect(speed).toMatch(
        /1,000 messages: Compactor projectRequest, preset vtcode \(clearing on\) warm .*: ratio [\d.]+/,
      );
      expect(speed.indexOf('## Per-turn projection speed')).toBeLessThan(
        speed.indexOf('## Headline: check half'),
      );
      expect(table(speed, 'Headline: check half')).toContain('| policy | 32k | 128k |');
      expect(a.err.join('')).toContain(
        'bench: running retention in its own process beside the other suites…',
      );
      // Progress lines: one per window and policy with its firing count.
      expect(a.err.join('')).toMatch(
        new RegExp(`bench: retention 200k anthropic-clear: fired on \\d+/${n} \\([\\d.]+ s\\)`),
      );
    } finally {
      rmSync(corpus, { recursive: true, force: true });
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('§14: a bad flag or a missing corpus stops the bench with one line and exit code 2', async () => {
    const a = io({});
    expect(await runBench(['--windows', '3000'], a)).toBe(2);
    expect(a.err).toEqual(['bench: --windows: expected token counts of at least 4000 separated by commas\n']);
    const b = io({ [CORPUS_ENV]: '/nonexistent/corpus' });
    // 8k is in the default sweep, so it is a valid window: the run gets as far as the corpus.
    expect(await runBench(['--only', 'retention', '--windows', '8000,16000'], b)).toBe(2);
    expect(b.err).toEqual([
      'bench: corpus directory not found: /nonexistent/corpus (from COMPACTOR_CORPUS)\n',
    ]);
    const c = io({});
    expect(await runBench(['--only', 'nope'], c)).toBe(2);
    expect(c.err.join('')).toMatch(/^bench: --only: unknown suite; expected some of estimator, .*\n$/);
    expect(await runBench(['--bogus'], c)).toBe(2);
  });
});
