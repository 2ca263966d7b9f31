import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loopScript } from '#dev/clients/tool-loop.js';
import { startAgentUpstream, type AgentUpstream } from '#dev/fakes/agent-upstream.js';
import {
  jsonSection,
  measureLoad,
  streamSection,
  type LatencyOptions,
  type LoadRow,
} from '#dev/bench/serve-latency.js';
import { freeEncoders } from '#src/estimate/index.js';

/*
 * The serve latency bench in a small run: the same fake model directly, through `compactor
 * serve` and through Portkey's gateway, plain and streamed. Only counts and relations inside
 * one run are checked, never how fast anything was.
 */

const TURNS = 2;
const PATHS = ['direct', 'compactor serve', 'Portkey gateway'];

let upstream: AgentUpstream;
beforeAll(async () => {
  upstream = await startAgentUpstream({
    window: 'unchecked-overflow-test',
    script: loopScript(TURNS),
    countUsage: false,
  });
});
afterAll(async () => {
  await upstream.close();
  freeEncoders();
});

const ctx = { quick: true, corpusDir: null, log: () => {} };

describe('serve latency bench', () => {
  it('streams through direct, compactor serve and Portkey alike: same requests and events per reply as direct, first event before the last', async () => {
    const o: LatencyOptions = { turns: TURNS, resultTokens: 100, levels: [10] };
    const { rows, notes } = await measureLoad(ctx, upstream, o);
    expect(notes).toEqual([]);
    const of = (mode: LoadRow['mode']) => rows.filter((r) => r.mode === mode);
    expect(of('json').map((r) => r.target)).toEqual(PATHS);
    expect(of('stream').map((r) => r.target)).toEqual(PATHS);
    // Ten sessions of TURNS tool calls and one answer each, on every path.
    for (const r of rows) expect(r.requests).toBe(10 * (TURNS + 1));
    const [direct, ...others] = of('stream');
    expect(direct.eventsPerReply).toBeGreaterThan(2);
    for (const r of others) expect(r.eventsPerReply).toBe(direct.eventsPerReply);
    for (const r of of('stream')) expect(r.firstP50).toBeLessThanOrEqual(r.p50);

    const plain = jsonSection(rows, o, notes);
    const streamed = streamSection(rows, o, notes);
    expect(plain.rows.map((r) => r[1])).toEqual(PATHS);
    expect(streamed.rows.map((r) => r[1])).toEqual(PATHS);
    const col = (name: string) => streamed.headers.indexOf(name);
    for (const name of ['added first p50 ms', 'added last p99 ms', 'req/s vs direct'])
      expect(col(name)).toBeGreaterThan(0);
    // Against direct: blank on direct's own row, a number on the others.
    expect(streamed.rows[0][col('added first p50 ms')]).toBe('');
    for (const r of streamed.rows.slice(1)) expect(typeof r[col('req/s vs direct')]).toBe('number');
  });

  it("without its streaming fix Portkey's gateway fails every streamed request: the bench says so in one line and measures the rest", async () => {
    const o: LatencyOptions = { turns: TURNS, resultTokens: 100, levels: [10], fixGatewayStreaming: false };
    const { rows, notes } = await measureLoad(ctx, upstream, o);
    expect(rows.filter((r) => r.mode === 'json').map((r) => r.target)).toEqual(PATHS);
    expect(rows.filter((r) => r.mode === 'stream').map((r) => r.target)).toEqual(PATHS.slice(0, 2));
    expect(notes).toHaveLength(1);
    expect(notes[0].mode).toBe('stream');
    expect(notes[0].text).toMatch(
      /^Portkey gateway not measured streaming: a streamed request through it failed \(.*answered 500.*\)\.$/,
    );
    expect(notes[0].text).not.toContain('\n');
    const section = streamSection(rows, o, notes);
    expect(section.rows.map((r) => r[1])).toEqual(PATHS.slice(0, 2));
    expect(section.notes).toContain(notes[0].text);
    expect(jsonSection(rows, o, notes).notes).not.toContain(notes[0].text);
  });
});
