import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loopScript } from '#dev/clients/tool-loop.js';
import { startAgentUpstream, type AgentUpstream } from '#dev/fakes/agent-upstream.js';
import {
  arrivals,
  body,
  cell,
  cellReads,
  memorySection,
  MODEL,
  queueModel,
  ratioInterval,
  scaleSection,
  send,
  spreadCell,
  type SpreadRequest,
} from '#dev/bench/serve-scale.js';
import { startUpstreamThread } from '#dev/bench/upstream-thread.js';
import { blockingSection } from '#dev/bench/serve-blocking.js';
import { freeEncoders } from '#src/estimate/index.js';

/*
 * The serve bench by history size in its quick run: one size, two sessions, the proxy in memory
 * and with --data-dir beside Portkey. Only what was measured is checked, never how fast.
 */

let upstream: AgentUpstream;
beforeAll(async () => {
  upstream = await startAgentUpstream({
    window: 'unchecked-overflow-test',
    script: loopScript(2),
    countUsage: false,
  });
});
afterAll(async () => {
  await upstream.close();
  freeEncoders();
});

/** A fake model that keeps no bodies, as the load cells' one. */
const lightUpstream = () =>
  startAgentUpstream({
    window: 'unchecked-overflow-test',
    script: loopScript(2),
    countUsage: false,
    keep: false,
  });

describe('serve bench by history size', () => {
  it('a fake model started not to keep bodies answers them and keeps none (a load cell fills no heap)', async () => {
    const text = body(cellReads(10_000, 1), 'keep', 10_000, 1);
    const kept = upstream.requests.length;
    await send({ name: 'kept', url: upstream.url, headers: {} }, text);
    expect(upstream.requests.length).toBe(kept + 1);
    const light = await lightUpstream();
    try {
      expect(await send({ name: 'light', url: light.url, headers: {} }, Buffer.from(text))).toBeGreaterThan(
        0,
      );
      expect([light.requests.length, light.turns.length]).toEqual([0, 0]);
    } finally {
      await light.close();
    }
  });

  it("the load cells' fake model answers without parsing as the parsing one does, and refuses what is not a Chat Completions body", async () => {
    const thread = await startUpstreamThread(2, MODEL);
    const post = async (url: string, text: string) => {
      const res = await fetch(`${url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: text,
      });
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    };
    // The answer but its id, and a stream's events but theirs.
    const answer = (text: string) => text.replace(/chatcmpl-t\d+/g, 'chatcmpl-t');
    try {
      const text = body(cellReads(10_000, 1), 'fake', 10_000, 1);
      const streamed = text.replace(/}$/, ',"stream":true}');
      for (const sent of [text, streamed]) {
        const [light, full] = [await post(thread.url, sent), await post(upstream.url, sent)];
        expect({ ...light, text: answer(light.text) }).toEqual({ ...full, text: answer(full.text) });
      }
      expect((await post(thread.url, '{"model":"gpt-4.1"}')).status).toBe(400);
      expect((await post(thread.url, text.slice(0, -1))).status).toBe(400);
    } finally {
      await thread.close();
    }
  });

  it('times each path alone, every session sending its turn to it at once, the same bodies to every path', async () => {
    const light = await lightUpstream();
    const paths = ['a', 'b', 'c'];
    const seen: Array<{ target: string; session: number; turn: number; start: number; ms: number }> = [];
    try {
      const out = await cell(
        paths.map((name) => ({ name, url: light.url, headers: {} })),
        cellReads(10_000, 2),
        'alone',
        10_000,
        4,
        2,
        () => undefined,
        (r) => seen.push(r),
      );
      expect(paths.map((p) => out.times.get(p)!.length)).toEqual([8, 8, 8]);
    } finally {
      await light.close();
    }
    // Requests of one path and turn go out together; no other path has any in flight meanwhile
    // (a session that went through the paths one after another would be at two at once).
    const bursts = new Map<string, { first: number; last: number; sessions: number[] }>();
    for (const r of seen) {
      const key = `${r.turn} ${r.target}`;
      const b = bursts.get(key) ?? { first: Infinity, last: -Infinity, sessions: [] };
      bursts.set(key, {
        first: Math.min(b.first, r.start),
        last: Math.max(b.last, r.start + r.ms),
        sessions: [...b.sessions, r.session],
      });
    }
    const inOrder = [...bursts.values()].sort((x, y) => x.first - y.first);
    expect(inOrder).toHaveLength(paths.length * 2);
    for (const [i, b] of inOrder.entries()) {
      expect([...b.sessions].sort()).toEqual([0, 1, 2, 3]);
      if (i > 0) expect(b.first).toBeGreaterThanOrEqual(inOrder[i - 1]!.last);
    }
  });

  it('sends each session its requests at seeded random times, the same times to every path, each path alone', async () => {
    const light = await lightUpstream();
    const paths = ['a', 'b', 'c'];
    const [sessions, turns, rate] = [4, 3, 50];
    const seen: SpreadRequest[] = [];
    try {
      const out = await spreadCell(
        paths.map((name) => ({ name, url: light.url, headers: {} })),
        cellReads(10_000, turns),
        { tag: 'spread', tokens: 10_000, sessions, turns, rate },
        (r) => seen.push(r),
      );
      expect(paths.map((p) => out.times.get(p)!.length)).toEqual([12, 12, 12]);
    } finally {
      await light.close();
    }
    // The times drawn: one per request of each session, increasing, spread over the sessions
    // (each session once per pass of `sessions` arrivals), and another seed draws others.
    const drawn = arrivals(sessions, turns, rate, 10_000 * 1_000 + sessions);
    expect(drawn.map((d) => d.length)).toEqual([3, 3, 3, 3]);
    for (const d of drawn) expect([...d].sort((x, y) => x - y)).toEqual(d);
    const passes = drawn.flat().sort((x, y) => x - y);
    for (let turn = 0; turn < turns; turn++)
      expect(drawn.map((d) => d[turn]!).sort((x, y) => x - y)).toEqual(
        passes.slice(turn * sessions, (turn + 1) * sessions),
      );
    expect(arrivals(sessions, turns, rate, 1)).not.toEqual(drawn);
    // Every path got every request at its drawn time, the same for every path, and none went
    // out before its time or before the session's previous answer.
    for (const p of paths) {
      const mine = seen.filter((r) => r.target === p);
      for (const r of mine) {
        expect(r.at).toBe(drawn[r.session]![r.turn - 1]);
        expect(r.start).toBeGreaterThanOrEqual(r.at);
        const before = mine.find((q) => q.session === r.session && q.turn === r.turn - 1);
        if (before) expect(r.start).toBeGreaterThanOrEqual(before.start + before.ms);
      }
      expect(mine.map((r) => `${r.session} ${r.turn}`).sort()).toEqual(
        drawn.flatMap((d, s) => d.map((_, t) => `${s} ${t + 1}`)).sort(),
      );
    }
    // Paths alone: each path's requests end before the next path starts.
    const spans = paths
      .map((p) => {
        const mine = seen.filter((r) => r.target === p);
        return {
          first: mine[0]!.zero,
          last: Math.max(...mine.map((r) => r.zero + r.start + r.ms)),
        };
      })
      .sort((x, y) => x.first - y.first);
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.first).toBeGreaterThanOrEqual(spans[i - 1]!.last);
  });

  it('models one queue over the arrivals: each waits for the ones before it, in arrival order', () => {
    // Three due at once and one later, 5 ms each: the second and third wait behind the first, the
    // fourth behind the third though it came 10 ms after them.
    expect(queueModel([10, 0, 0, 0], 5)).toEqual({ service: 5, p50: 5, p99: 10 });
    expect(queueModel([0, 20, 40], 5)).toEqual({ service: 5, p50: 0, p99: 0 });
  });

  it("puts one path's p99 over another's in an interval from resampling both", () => {
    // Three hiccups in 200 requests: the p99 is one of them or not, as the resampling draws.
    const hiccups = Array.from({ length: 200 }, (_, i) => 3 + (i % 20) / 4 + (i % 67 === 0 ? 20 : 0));
    const [low, high] = ratioInterval(hiccups, hiccups, 99, 1).split('–').map(Number);
    // The same requests: the scatter alone, across 1, and wide.
    expect(low).toBeLessThan(0.5);
    expect(high).toBeGreaterThan(2);
    // Without hiccups, every request twice as slow: the whole interval near 2.
    const even = Array.from({ length: 200 }, (_, i) => 3 + (i % 20) / 4);
    const twice = even.map((ms) => ms * 2);
    const [low2, high2] = ratioInterval(twice, even, 99, 1).split('–').map(Number);
    expect(low2).toBeGreaterThan(1.8);
    expect(high2).toBeLessThan(2.2);
    // Seeded: the same lists and seed give the same interval.
    expect(ratioInterval(hiccups, even, 99, 7)).toBe(ratioInterval(hiccups, even, 99, 7));
  });

  it('times every counted request through both proxy modes and Portkey, with the parse floor of the same bodies', async () => {
    const [section, spread] = await scaleSection({ quick: true, corpusDir: null, log: () => {} });
    expect(section.rows.map((r) => r.slice(0, 5))).toEqual([
      ['10k', 2, 'memory', 6, 0],
      ['10k', 2, 'data-dir', 6, 0],
    ]);
    const col = (name: string) => section.headers.indexOf(name);
    for (const row of section.rows) {
      // Every column from p50 on is a number (the interval two of them): Portkey ran too.
      const interval = col('p99 / Portkey p99, 90 % interval');
      for (const cell of row.slice(5).filter((_, i) => i + 5 !== interval))
        expect(typeof cell).toBe('number');
      const [low, high] = String(row[interval]).split('–').map(Number);
      expect(low).toBeGreaterThan(0);
      expect(high).toBeGreaterThanOrEqual(low!);
      expect(row[col('parse floor')]).toBeGreaterThan(0);
      // Each path's own tail over its own median, the proxy's and Portkey's alike.
      for (const [spread, p50, p99] of [
        ['p99 / p50', 'p50', 'p99'],
        ['Portkey p99 / p50', 'Portkey p50', 'Portkey p99'],
      ]) {
        const ratio = (row[col(p99)] as number) / (row[col(p50)] as number);
        // The ms shown are rounded to 0.1: their ratio is the spread within that rounding.
        expect(Math.abs((row[col(spread)] as number) / ratio - 1)).toBeLessThan(0.1);
        expect(row[col(spread)]).toBeGreaterThanOrEqual(1);
      }
    }
    // The data-dir proxy wrote its sessions to storage; the one in memory wrote none of theirs.
    const [memory, dataDir] = section.rows;
    const written = col('KiB written / request');
    expect(dataDir[written]).toBeGreaterThan(0);
    expect(memory[written]).toBeLessThan(dataDir[written] as number);
    expect(section.notes?.join(' ')).toMatch(/memory \d+ MiB, data-dir \d+ MiB/);
    // Spread arrivals: every path, each with its p99 / p50 beside the one in bursts.
    expect(spread!.rows.map((r) => r.slice(0, 2).concat(r.slice(3, 6)))).toEqual(
      ['direct', 'memory', 'data-dir', 'Portkey'].map((path) => ['10k', 2, path, 6, 0]),
    );
    const at = (name: string) => spread!.headers.indexOf(name);
    for (const row of spread!.rows) {
      expect(row[at('requests / s')]).toBeGreaterThan(0);
      expect(row[at('p99 / p50')]).toBeGreaterThanOrEqual(1);
      expect(row[at('one queue p99 / p50')]).toBeGreaterThanOrEqual(1);
      const burst = section.rows.find((r) => r[col('mode')] === row[at('path')]);
      if (burst) expect(row[at('p99 / p50 in bursts')]).toBe(burst[col('p99 / p50')]);
    }
  });

  it("measures the proxy's memory per session after a full collection, all open and a tenth open", async () => {
    const section = await memorySection({ quick: true, corpusDir: null, log: () => {} }, upstream, 10);
    expect(section.rows.map((r) => r.slice(0, 2))).toEqual([
      [10, 10],
      [10, 1],
    ]);
    const col = (name: string) => section.headers.indexOf(name);
    for (const row of section.rows) for (const cell of row) expect(Number.isFinite(cell)).toBe(true);
    const [open, closed] = section.rows as number[][];
    // A 10k-token history is some tens of KiB of JSON.
    expect(open[col('raw KiB per session')]).toBeGreaterThan(20);
    // Read from the proxy through its inspector after a collection: live sessions hold at least
    // their histories' characters, and sessions closed to make room hold less.
    const held = col('heap and external KiB');
    expect(open[held]).toBeGreaterThan(open[col('raw KiB per session')] / 2);
    expect(closed[held]).toBeLessThan(open[held]);
  });

  it('times small requests alone and beside a large one of another session', async () => {
    const section = await blockingSection({ quick: true, corpusDir: null, log: () => {} }, upstream);
    expect(section.rows.map((r) => r[0])).toEqual(['alone', 'beside one 2 MiB request']);
    const [alone, beside] = section.rows;
    expect(alone[1]).toBe(5);
    // Small requests went one after another while the large one was in flight: more than the
    // one that waits for it were answered meanwhile.
    expect(beside[1]).toBeGreaterThanOrEqual(2);
    for (const row of section.rows) for (const cell of row.slice(2)) expect(Number.isFinite(cell)).toBe(true);
  });
});
