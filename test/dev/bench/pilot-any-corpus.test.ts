import { describe, it, expect } from '@jest/globals';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLED_CORPUS_DIR, CORPUS_ENV, sessionCorpusDir } from '#dev/bench/corpus.js';
import { loadCorpusSessions } from '#dev/bench/corpus-sessions.js';
import { retentionSuite, runWindow } from '#dev/bench/retention-bench.js';
import { noClearingPolicy } from '#dev/replay/policies/index.js';
import type { RetentionPolicy } from '#dev/replay/types.js';
import { fastEstimator } from '#support/replay/helpers.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const FORMATS = join(ROOT, 'test/fixtures/formats');

describe('retention pilot on any importable corpus (§14)', () => {
  it('§14: runs over every bundled example session format and reports every section', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pilot-'));
    try {
      for (const f of readdirSync(FORMATS)) copyFileSync(join(FORMATS, f), join(dir, f));
      writeFileSync(join(dir, 'broken.jsonl'), '{"not": "a session"\n');
      const logs: string[] = [];
      const sections = await retentionSuite.run({
        quick: true,
        corpusDir: dir,
        windows: [32_000],
        synthetic: 1,
        log: (l) => logs.push(l),
      });
      const titles = sections.map((s) => s.title);
      expect(titles).toContain('Corpus and the fixed tuning/check split');
      expect(titles.some((t) => t.startsWith('Retention and cost, check half, window 32k'))).toBe(true);
      expect(titles.some((t) => t.startsWith('How often each policy fired'))).toBe(true);
      const sure = sections.find((s) =>
        s.title.startsWith(
          'How sure: the defaults against each other setting and policy, check half, window 32k',
        ),
      )!;
      expect(sure.rows.length).toBeGreaterThan(0);
      for (const row of sure.rows) {
        expect(['better', 'worse', 'within noise']).toContain(row[2]);
        expect(['better', 'worse', 'within noise']).toContain(row[4]);
      }
      const corpus = sections.find((s) => s.title.startsWith('Corpus'))!;
      // Every fixture format gave at least one session; the broken file is reported, not fatal.
      const sessionNames = corpus.rows.map((r) => String(r[0]));
      for (const f of readdirSync(FORMATS)) expect(sessionNames.some((n) => n.startsWith(f))).toBe(true);
      expect(sessionNames.some((n) => n.startsWith('synthetic:'))).toBe(true);
      expect(corpus.notes?.some((n) => n.startsWith('Could not import broken.jsonl'))).toBe(true);
      const check = sections.find((s) => s.title.startsWith('Retention and cost, check half'))!;
      expect(check.headers).toEqual(
        expect.arrayContaining(['$ anthropic', '$ openai', '$ gemini', 'cache read']),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('§14: a policy that throws on one session is reported as failed there and the run goes on', async () => {
    const { sessions } = loadCorpusSessions(FORMATS);
    // The replay's session keeps its own copies of the messages, so the first session is
    // recognised by a message no other session holds.
    const others = new Set(sessions.slice(1).flatMap((s) => s.messages.map((m) => JSON.stringify(m))));
    const mark = sessions[0].messages.map((m) => JSON.stringify(m)).find((m) => !others.has(m));
    const flaky: RetentionPolicy = {
      name: 'flaky',
      description: 'throws on the first session',
      source: 'baseline',
      project: (history) =>
        history.some((m) => JSON.stringify(m) === mark)
          ? Promise.reject(new TypeError('boom'))
          : Promise.resolve(history),
    };
    const [none, bad] = await runWindow(sessions, 32_000, [noClearingPolicy, flaky], fastEstimator());
    expect(none.failures).toEqual([]);
    expect(bad.failures).toEqual([{ session: sessions[0].name, error: 'TypeError: boom' }]);
    expect(bad.perSession.filter((s) => s.ok)).toHaveLength(sessions.length - 1);
  });

  it('§14: the corpus comes from the flag, else the environment variable; a missing one is an error', () => {
    expect(sessionCorpusDir(FORMATS, {})).toBe(FORMATS);
    expect(sessionCorpusDir(undefined, { [CORPUS_ENV]: FORMATS })).toBe(FORMATS);
    expect(() => sessionCorpusDir('/nonexistent/corpus', {})).toThrow(
      /corpus directory not found: \/nonexistent\/corpus \(from --corpus\)/,
    );
  });

  it('§14: without flag or variable the corpus is the real sessions bundled in the repository', () => {
    const dir = sessionCorpusDir(undefined, {});
    expect(dir).toBe(BUNDLED_CORPUS_DIR);
    expect(dir.startsWith(ROOT)).toBe(true);
    expect(loadCorpusSessions(dir).sessions.length).toBeGreaterThan(20);
  });
});
