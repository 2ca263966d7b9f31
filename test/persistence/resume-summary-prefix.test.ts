import { afterAll, describe, expect, it } from '@jest/globals';
import { freeEncoders } from '#src/estimate/index.js';
import { msg, type Message } from '#src/messages/message.js';
import type { Checkpoint } from '#src/runtime/checkpoint.js';
import { createCompactorSession } from '#src/session/index.js';
import { useFakeProviders } from '#support/fake-providers.js';
import { readExchanges, templateSummary } from '#support/session/fixtures.js';

/**
 * A summary by the agent's own model asks over the last request sent, so the provider's
 * prompt cache serves it. A turn killed before its summary call and resumed in a fresh session
 * (nothing of the first process left but the checkpoint) sends that summary over the very same
 * request: its checkpoint keeps the request the first run would have extended.
 */

afterAll(freeEncoders);
const CAPACITY = 8_000;
const fakes = useFakeProviders({ window: CAPACITY, summaryText: templateSummary() });

const READ_FILE = {
  name: 'read_file',
  description: 'Read a file of the repository.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

const exchanges = readExchanges;

const START = [msg.system('You are a coding agent.'), msg.user('Fix the parser.')];
const FIRST = exchanges(0, 4);
const SECOND = exchanges(4, 12);

const sessionOf = (history: readonly Message[]) =>
  createCompactorSession({
    history: [...history],
    route: {
      provider: 'openai-compatible',
      model: 'deepseek-chat',
      baseUrl: fakes.oai.url,
      apiKeyEnv: 'FAKE_KEY',
      env: { FAKE_KEY: 'fake-key-0123456789' },
    },
    envelope: {
      provider: 'openai-compatible',
      model: 'deepseek-chat',
      system: 'You are a coding agent.',
      tools: [READ_FILE],
    },
    http: { retries: 0 },
    limits: { capacity: CAPACITY, reservedOutput: 1_000 },
    // Compaction instead of clearing, so the second turn asks for a summary.
    policy: { enabled: false, clearWhenPassBuysFewerTurns: 0 },
  });

/** The bodies of the summary calls the fake received since `from`. */
const summaryBodies = (from: number) => fakes.oai.requests.slice(from).map((r) => JSON.stringify(r.body));

describe('a resumed turn asks its summary over the last request sent (R2)', () => {
  it('R2: killed before its summary call and resumed in a fresh session, a turn sends the same summary request as the uninterrupted run', async () => {
    // The uninterrupted run: a turn that sends a request, then one that compacts.
    const s = sessionOf(START);
    const first = await s.runTurn({ pending: FIRST });
    expect(first.decision).toBe('below-threshold');
    const before = [...s.history];
    const taken: Checkpoint[] = [];
    const from = fakes.oai.requests.length;
    const straight = await s.runTurn({
      pending: SECOND,
      onCheckpoint: (c) => taken.push(JSON.parse(JSON.stringify(c))),
    });
    s.close();
    expect(straight.decision).toBe('compacted');
    expect(straight.summaryCache).toMatchObject({ request: 'prefix', fallback: null });
    const uninterrupted = summaryBodies(from);
    expect(uninterrupted).toHaveLength(1);
    // Over the last request sent: the first turn's request (its system message included), then the instructions.
    const sent = JSON.parse(uninterrupted[0]!).messages as { role: string }[];
    expect(sent.length).toBe(first.request!.length + 1);

    // Killed at its first checkpoint, before any provider call, and resumed by a fresh session
    // that knows only the history the turn started from.
    const resumedFrom = fakes.oai.requests.length;
    const fresh = sessionOf(before);
    const resumed = await fresh.runTurn({ pending: SECOND, resumeFrom: taken[0]! });
    fresh.close();
    expect(resumed.decision).toBe('compacted');
    expect(resumed.summaryCache).toMatchObject({ request: 'prefix', fallback: null });
    expect(summaryBodies(resumedFrom)).toEqual(uninterrupted);
    expect(resumed.history).toEqual(straight.history);
  });
});
