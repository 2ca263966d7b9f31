import { describe, it, expect } from '@jest/globals';
import { lineChart } from '#dev/bench/charts/line-chart.js';
import { frontier, scatterChart } from '#dev/bench/charts/scatter-chart.js';
import { recallOf, runWindow, totalTokensOf, type CorpusSession } from '#dev/bench/retention-bench.js';
import { findEvidenceNeeds } from '#dev/replay/evidence.js';
import { allPolicies } from '#dev/replay/policies/index.js';
import { fastEstimator, readSession } from '#support/replay/helpers.js';

/** Tiny XML well-formedness check: balanced tags, one root, quoted attributes, no stray `<` or `&`. */
function checkXml(text: string): { root: string; rootAttrs: string } {
  const stack: string[] = [];
  let root = '';
  let rootAttrs = '';
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/y;
  let i = 0;
  while (i < text.length) {
    const lt = text.indexOf('<', i);
    const chunk = text.slice(i, lt < 0 ? text.length : lt);
    if (/&(?!(amp|lt|gt|quot|apos);)/.test(chunk)) throw new Error(`bad entity near ${i}`);
    if (lt < 0) break;
    tag.lastIndex = lt;
    const m = tag.exec(text);
    if (!m) throw new Error(`malformed tag at ${lt}: ${text.slice(lt, lt + 40)}`);
    const [, close, name, attrs, selfClose] = m;
    if (close) {
      if (stack.pop() !== name) throw new Error(`unbalanced </${name}>`);
    } else {
      if (stack.length === 0) {
        if (root) throw new Error('more than one root element');
        root = name;
        rootAttrs = attrs;
      }
      if (!selfClose) stack.push(name);
    }
    i = tag.lastIndex;
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack.join('>, <')}>`);
  return { root, rootAttrs };
}

async function smallRuns() {
  const messages = readSession(30);
  const sessions: CorpusSession[] = [{ name: 'small', messages, needs: findEvidenceNeeds(messages) }];
  return runWindow(sessions, 24_000, allPolicies(), fastEstimator());
}

describe('report charts (§14 report)', () => {
  it('§14: recall-vs-tokens scatter is well-formed SVG with a viewBox, axis labels, one series per policy and a frontier', async () => {
    const runs = await smallRuns();
    const svg = scatterChart(
      runs.map((r) => ({ name: r.policy.name, x: totalTokensOf(r.totals), y: recallOf(r.totals) })),
      { title: 'Recall vs tokens', x: 'total tokens', y: 'recall' },
    );
    const { root, rootAttrs } = checkXml(svg);
    expect(root).toBe('svg');
    expect(rootAttrs).toMatch(/viewBox="0 0 \d+ \d+"/);
    expect(svg).toContain('class="x-label"');
    expect(svg).toContain('class="y-label"');
    expect(svg.match(/<g class="series"/g)).toHaveLength(runs.length);
    for (const r of runs) expect(svg).toContain(`data-series="${r.policy.name}"`);
    expect(svg).toContain('class="frontier"');
  });
  it('§14: tokens-per-turn line chart is well-formed SVG with one polyline per policy', async () => {
    const runs = await smallRuns();
    const svg = lineChart(
      runs.map((r) => ({
        name: r.policy.name,
        points: (r.perSession[0].ok ? r.perSession[0].result.turns : []).map((t, k): [number, number] => [
          k + 1,
          t.projectedTokens,
        ]),
      })),
      { title: 'Tokens per turn <small & long>', x: 'turn', y: 'tokens' },
    );
    expect(checkXml(svg).root).toBe('svg');
    expect(svg).toContain('&lt;small &amp; long&gt;');
    expect(svg.match(/<polyline /g)).toHaveLength(runs.length);
  });
  it('§14: the checker rejects unbalanced markup (so the tests above can fail)', () => {
    expect(() => checkXml('<svg viewBox="0 0 1 1"><g></svg>')).toThrow();
    expect(() => checkXml('<svg>a & b</svg>')).toThrow();
  });
  it('§14: frontier = points no other point beats on both cost and recall', () => {
    const pts = [
      { name: 'a', x: 10, y: 0.9 },
      { name: 'b', x: 20, y: 0.95 },
      { name: 'c', x: 25, y: 0.9 },
      { name: 'd', x: 5, y: 0.5 },
    ];
    expect(frontier(pts).map((i) => pts[i].name)).toEqual(['d', 'a', 'b']);
  });
});
