import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import type { RunningServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { RECALL_FINAL, markerOf } from '#dev/fakes/recall-model.js';
import type { FakeServer } from '#dev/fakes/fake-http.js';
import { RECALL_LOOPS, geminiLoop, startRecallProxy } from '#support/serve/recall-loops.js';

/**
 * The model says something, then calls `recall` in the same turn. In a stream the text has
 * already reached the client when the call opens: the proxy holds the stream from the call on,
 * answers it, and goes on with the model's next answer in the same stream, so the client reads
 * one answer (the text before the recall, then the rest) and never the recall call.
 */

afterAll(() => freeEncoders());

const WINDOW = 16_000;
const FILES = 8;
const BEFORE = 'Let me look at the first file again. ';
const started: Array<RunningServer | FakeServer> = [];

afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

async function setup() {
  const { upstream, server } = await startRecallProxy({
    window: WINDOW,
    files: FILES,
    textBeforeRecall: BEFORE,
  });
  started.push(upstream, server);
  return { upstream, server };
}

const recallTurns = async (server: RunningServer, id: string) =>
  ((await (await fetch(`${server.url}/compactor/sessions/${id}`)).json()) as { recallTurns: number })
    .recallTurns;

describe('compactor serve: a recall call after text in the same turn', () => {
  for (const { protocol, name, run } of RECALL_LOOPS)
    it(`C6: ${protocol} (streamed): the client reads the text, then the answer after the recall round, in one stream`, async () => {
      const { upstream, server } = await setup();
      const seen = await run(server.url, true);
      // The model's words before the recall and its answer after it, as one answer.
      expect(seen.final).toBe(`${BEFORE}${RECALL_FINAL(markerOf(0))}`);
      expect(seen.calledTools).toEqual(Array.from({ length: FILES }, () => 'read_file'));
      // One upstream request more than the client made: the recall round.
      expect(upstream.requests).toHaveLength(FILES + 2);
      const last = JSON.stringify(upstream.requests.at(-1)!.body);
      expect(last).toContain(BEFORE.trim());
      expect(last).toContain(markerOf(0));
      expect(await recallTurns(server, `recall-${name}-true`)).toBe(1);
      expect(upstream.violations).toEqual([]);
    });

  it('C6: gemini streamed as one JSON array: the recall call is answered and the client gets the last answer', async () => {
    const { upstream, server } = await setup();
    const seen = await geminiLoop(server.url, 'array', 'recall-gemini-array');
    expect(seen.final).toBe(RECALL_FINAL(markerOf(0)));
    expect(seen.calledTools).toEqual(Array.from({ length: FILES }, () => 'read_file'));
    expect(seen.recallRounds.at(-1)).toBe(1);
    expect(upstream.requests).toHaveLength(FILES + 2);
    expect(await recallTurns(server, 'recall-gemini-array')).toBe(1);
  });
});
