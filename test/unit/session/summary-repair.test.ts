import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freeEncoders } from '#src/estimate/index.js';
import { createCompactorSession } from '#src/session/index.js';
import { isSummaryMessage } from '#src/summary/index.js';
import type { FakeServer } from '#support/fake-http.js';
import { startFakeOpenAI } from '#support/fake-openai.js';
import { agentSession } from '#support/session/fixtures.js';

afterAll(freeEncoders);

const CAPACITY = 32_000; // the sessions' capacity: the fake holds requests to it

describe('session compaction with a model that drops template headings (§14)', () => {
  let srv: FakeServer;
  beforeAll(async () => {
    srv = await startFakeOpenAI({
      window: CAPACITY,
      summaryText: '## Goal\n- fix add() in app.py\n## Commands\n- pytest -q exited 0',
    });
  });
  afterAll(() => srv.close());

  const session = () =>
    createCompactorSession({
      history: agentSession(20_000),
      route: { provider: 'openai-compatible', model: 'deepseek-chat', baseUrl: srv.url, env: {} },
      http: { retries: 0, timeoutMs: 120_000 },
      limits: { capacity: CAPACITY },
    });

  it('§14: after one repair request the smaller summary is accepted; the report warns and lists the missing sections', async () => {
    const s = session();
    const before = srv.requests.length;
    const report = await s.compact();
    expect(report.status).toBe('compacted');
    expect(srv.requests.length - before).toBe(2);
    const repair = srv.requests[srv.requests.length - 1].body.messages;
    expect(repair[repair.length - 1].content).toMatch(/rejected: "summary is missing required sections: /);
    expect(report.warnings).toHaveLength(1);
    expect(report.warnings[0]).toMatch(/^summary accepted without the template sections: /);
    expect(report.missingSections.length).toBeGreaterThan(0);
    expect(report.missingSections).not.toContain('Goal');
    expect(s.history.some(isSummaryMessage)).toBe(true);
  });

  it('§14: a truncated summary is still rejected and history stays unchanged', async () => {
    const s = session();
    const history = s.history;
    srv.script.push({ kind: 'length' });
    const report = await s.compact();
    expect(report.status).toBe('failed');
    expect(report.failure?.reason).toBe('summary-truncated');
    expect(report.warnings).toEqual([]);
    expect(s.history).toBe(history);
  });
});
