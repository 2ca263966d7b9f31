import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import type { RunningServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { wirePrompt } from '#dev/fakes/wire-prompt.js';
import { LOST, RECALL_FINAL, markerOf, recallPath } from '#dev/fakes/recall-model.js';
import { RECALL_LOOPS as LOOPS, anthropicLoop, startRecallProxy } from '#support/serve/recall-loops.js';
import type { FakeServer } from '#dev/fakes/fake-http.js';
import { topLevelValueText } from '#src/serve/json-splice.js';

afterAll(() => freeEncoders());

const WINDOW = 16_000;
const FILES = 8;
const started: Array<RunningServer | FakeServer> = [];

afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

async function setup() {
  const { upstream, server } = await startRecallProxy({ window: WINDOW, files: FILES });
  started.push(upstream, server);
  return { upstream, server };
}

describe('compactor serve answers the model recall calls itself', () => {
  for (const { protocol, name, run } of LOOPS)
    for (const stream of [false, true])
      it(`C6: ${protocol}${stream ? ' (streamed)' : ''}: a task that needs a cleared file gets the right answer; the client never sees recall`, async () => {
        const { upstream, server } = await setup();
        const seen = await run(server.url, stream);
        expect(seen.final).toBe(RECALL_FINAL(markerOf(0)));
        expect(seen.final).not.toBe(LOST);
        expect(seen.calledTools).toEqual(Array.from({ length: FILES }, () => 'read_file'));
        // One recall round, on the last request; every other request went upstream once.
        expect(seen.recallRounds.slice(0, -1).every((n) => n === 0)).toBe(true);
        expect(seen.recallRounds.at(-1)).toBe(1);
        expect(upstream.requests).toHaveLength(FILES + 2);
        // The first file really was cleared before the model asked for it.
        const beforeRecall = wirePrompt(protocol, upstream.requests.at(-2)!.body);
        const texts = beforeRecall.messages.flatMap((m) => m.texts).join('\n');
        expect(texts).not.toContain(markerOf(0));
        expect(texts).toContain(recallPath(0));
        // The tool list is the same bytes in every request of the session, the recall tool included.
        const tools = upstream.requests.map((r) => JSON.stringify(r.body.tools));
        expect(new Set(tools).size).toBe(1);
        expect(tools[0]).toContain('"recall"');
        expect(upstream.violations).toEqual([]);
        const state = (await (
          await fetch(`${server.url}/compactor/sessions/recall-${name}-${stream}`)
        ).json()) as { recallTurns: number };
        expect(state.recallTurns).toBe(1);
      });
});

describe('a recall round fits the window like the request before it', () => {
  it('C6: a recalled original larger than the room left is cut to the lines that fit, with the range to ask next; nothing goes over the window and the tool list keeps its bytes', async () => {
    const { upstream, server } = await setup();
    // The first file alone is more than the window holds: the recall round has no room for all of it.
    const seen = await anthropicLoop(server.url, false, (n) => (n === 0 ? 20_000 : 2_500));
    expect(seen.final).toBe(RECALL_FINAL(markerOf(0)));
    expect(seen.recallRounds.at(-1)).toBe(1);
    expect(upstream.violations).toEqual([]);
    const last = wirePrompt('anthropic', upstream.requests.at(-1)!.body);
    const answer = last.messages.at(-1)!.texts.join('\n');
    expect(answer).toMatch(
      /^lines 1-\d+ of \d+ of r-[0-9a-f]{8} \(only these fit the context window; recall r-[0-9a-f]{8} with a range from line \d+ for the rest\):\n/,
    );
    expect(answer).toContain(markerOf(0));
    // The same bytes of tools in every request, the client's own and the recall tool's.
    const tools = upstream.requests.map((r) => topLevelValueText(r.raw, 'tools'));
    expect(new Set(tools).size).toBe(1);
    expect(tools[0]).toContain('"recall"');
  });
});
