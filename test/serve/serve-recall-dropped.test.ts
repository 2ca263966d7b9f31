import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import type { RunningServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { wirePrompt } from '#dev/fakes/wire-prompt.js';
import { RECALL_FINAL, markerOf } from '#dev/fakes/recall-model.js';
import { RECALL_LOOPS, RECALL_TASK, startRecallProxy } from '#support/serve/recall-loops.js';
import type { FakeServer } from '#dev/fakes/fake-http.js';

afterAll(() => freeEncoders());

// A window so small that clearing every result leaves too many exchanges: the oldest are left out whole.
const WINDOW = 2_000;
const FILES = 18;
const started: Array<RunningServer | FakeServer> = [];

afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

describe('exchanges a tiny window leaves out are recalled through the note on the task', () => {
  for (const { protocol, run } of RECALL_LOOPS)
    it(`C6: ${protocol}: the model finds the first file's id from the note's span id and answers right`, async () => {
      const { upstream, server } = await startRecallProxy({ window: WINDOW, files: FILES });
      started.push(upstream, server);
      const seen = await run(server.url, false);
      expect(seen.final).toBe(RECALL_FINAL(markerOf(0)));
      // Two recall rounds on the last request: the span's list, then the first file's result.
      expect(seen.recallRounds.at(-1)).toBe(2);
      expect(upstream.violations).toEqual([]);
      // The request the model answered with its first recall had left the first file out whole,
      // and its task named what was left out.
      const before = wirePrompt(protocol, upstream.requests.at(-3)!.body);
      const texts = before.messages.flatMap((m) => m.texts).join('\n');
      expect(texts).not.toContain(markerOf(0));
      expect(texts).not.toContain('src/file-0.ts');
      const task = before.messages.find((m) => m.role === 'user')!.texts.join('');
      expect(task).toMatch(
        new RegExp(
          `^${RECALL_TASK}\\n\\n\\[compactor: \\d+ older messages were left out[^]*\\n- s-[0-9a-f]{8} `,
        ),
      );
      const tools = upstream.requests.map((r) => JSON.stringify(r.body.tools));
      expect(new Set(tools).size).toBe(1);
    });
});
