import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSessionFile } from '#src/formats/index.js';
import { msg, type Message } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';
import { closeAll, type FakeServer } from '#support/fake-http.js';
import { startFakeAnthropic } from '#support/fake-anthropic.js';
import { FAKE_ENCRYPTED, startFakeOpenAI } from '#support/fake-openai.js';
import { estimateBodyTokens } from '#support/fake-window.js';
import { templateSummary } from '#support/session/fixtures.js';

/**
 * Native compaction through the session API against fake servers over real HTTP: native
 * requests are bounded to the capacity with the compaction marker kept, a standalone failure is
 * retried (capacity) or falls back to Local, and a pass with nothing to compact or under the
 * inline trigger makes no pointless call. Both servers declare the window the sessions use.
 */

const WINDOW = 8_000;
const HTTP = { retries: 0, timeoutMs: 120_000 };
const KEY = { apiKeyEnv: 'FAKE_ANTHROPIC_KEY', env: { FAKE_ANTHROPIC_KEY: 'fake-anthropic-key-0123' } };
const history: Message[] = readSessionFile('examples/sessions/django__django-16560.traj.json').sessions[0]
  .messages;
const tmp = mkdtempSync(join(tmpdir(), 'compactor-native-bounds-'));
const trusted = join(tmp, 'native.json');
writeFileSync(trusted, JSON.stringify({ providers: { openai: { nativeHosts: ['127.0.0.1'] } } }));

let oai: FakeServer;
let ant: FakeServer;
beforeAll(async () => {
  oai = await startFakeOpenAI({ summaryText: templateSummary(), window: WINDOW });
  ant = await startFakeAnthropic({ summaryText: templateSummary(), window: WINDOW });
});
afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  await closeAll(oai, ant);
});
beforeEach(() => {
  for (const s of [oai, ant]) {
    s.requests.length = 0;
    s.script = [];
  }
});

const standalone = (h: readonly Message[]) =>
  createCompactorSession({
    history: [...h],
    route: { provider: 'openai', model: 'gpt-5.4', baseUrl: oai.url, catalogFile: trusted },
    limits: { capacity: WINDOW },
    http: HTTP,
  });
const inline = (h: readonly Message[]) =>
  createCompactorSession({
    history: [...h],
    route: { provider: 'anthropic', model: 'claude-opus-4-6', baseUrl: ant.url, ...KEY },
    limits: { capacity: WINDOW },
    http: HTTP,
  });

describe('nothing to compact', () => {
  it('S3: manual compaction of a small history says there is nothing to compact and makes no provider call', async () => {
    const s = inline([
      msg.system('You are terse.'),
      msg.user('Fix the typo in README.md.'),
      msg.assistant('Done.'),
    ]);
    expect(s.route.strategy.kind).toBe('nativeInline');
    const r = await s.compact();
    expect(ant.requests).toHaveLength(0);
    expect(r).toMatchObject({ status: 'unchanged', summaryCalls: 0, failure: null });
    expect(r.message).toBe(
      'Nothing to compact: all 3 context items are recent enough to be kept as they are, so no summary was requested.',
    );
    expect(s.history).toHaveLength(3);
  });

  it('A4: a history under the compact trigger makes no inline call; the Local summary runs at once', async () => {
    const s = inline(history);
    const r = await s.compact();
    expect(r).toMatchObject({
      status: 'compacted',
      requestedStrategy: 'nativeInline',
      strategy: 'local',
      fallbackReason: 'below-trigger',
      summaryCalls: 1,
    });
    expect(ant.requests).toHaveLength(1);
    expect(ant.requests[0].body.context_management).toBeUndefined();
  });
});

describe('native standalone requests', () => {
  const marker = msg.assistant('', undefined, {
    reasoningDetails: [{ type: 'compaction', id: 'cmp_prev', encrypted_content: 'gAAAAPREVIOUS==' }],
  });
  const withMarker = [history[0], history[1], marker, ...history.slice(2)];

  it('O3/L1: the /responses/compact request is bounded to the window and keeps the earlier compaction marker', async () => {
    const s = standalone(withMarker);
    const r = await s.compact();
    expect(r).toMatchObject({ status: 'compacted', strategy: 'nativeStandalone' });
    expect(oai.requests).toHaveLength(1);
    const sent = oai.requests[0].body;
    expect(estimateBodyTokens(sent)).toBeLessThanOrEqual(WINDOW);
    expect(sent.input).toContainEqual(
      expect.objectContaining({ type: 'compaction', encrypted_content: 'gAAAAPREVIOUS==' }),
    );
    expect(s.history.some((m) => JSON.stringify(m).includes(FAKE_ENCRYPTED))).toBe(true);
  });

  it('L5: a capacity rejection of the standalone request is retried once with a smaller input', async () => {
    oai.script.push({ kind: 'overflow', shape: 'openai-responses' });
    const r = await standalone(history).compact();
    expect(r).toMatchObject({ status: 'compacted', strategy: 'nativeStandalone', summaryCalls: 2 });
    expect(oai.requests.map((q) => q.path)).toEqual(['/v1/responses/compact', '/v1/responses/compact']);
    expect(estimateBodyTokens(oai.requests[1].body)).toBeLessThan(estimateBodyTokens(oai.requests[0].body));
  });

  it('S1: a failed standalone request falls back to the Local summary', async () => {
    oai.script.push({ kind: 'server-error', status: 500 });
    const r = await standalone(history).compact();
    expect(r).toMatchObject({
      status: 'compacted',
      requestedStrategy: 'nativeStandalone',
      strategy: 'local',
      fallbackReason: 'standalone-error',
      summaryCalls: 2,
    });
    expect(oai.requests[0].path).toBe('/v1/responses/compact');
    expect(oai.requests[1].path).not.toBe('/v1/responses/compact');
  });
});
