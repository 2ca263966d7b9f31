import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import Anthropic from '@anthropic-ai/sdk';
import { freeEncoders } from '#src/estimate/index.js';
import { startServer, type RunningServer } from '#src/serve/index.js';
import { READ_FILE, SYSTEM } from '#dev/loops/loop-matrix.js';
import {
  LOST,
  RECALL_FINAL,
  markerOf,
  recallFile,
  recallPath,
  startRecallUpstream,
} from '#dev/fakes/recall-model.js';
import type { FakeServer } from '#dev/fakes/fake-http.js';
import { wirePrompt } from '#dev/fakes/wire-prompt.js';
import { RestateServer, startWorker, stopWorker, type Worker } from '#dev/restate/harness.js';
import { RECALL_TASK } from '#support/serve/recall-loops.js';
import { RESTATE_TEST_MS, restateSuite } from '#support/time-limits.js';

/**
 * Recall on the Restate engine: the proxy (in this process) keeps its sessions in a real
 * Restate server served by one Node 24 worker with the embedded summarizer, so a compaction's
 * summary names the results it replaced by recall ids. The client clears old tool results
 * itself (as some agents do), so the originals are only in what Restate stored.
 */

const { install, describeWithRestate } = restateSuite();
jest.setTimeout(RESTATE_TEST_MS);

const WINDOW = 16_000;
const FILES = 8;
const FILE_TOKENS = 2_500;
const SESSION = 'recall-on-restate';
const CLEARED_BY_CLIENT = '[Old tool result content cleared]';

afterAll(() => freeEncoders());

describeWithRestate('recall on the Restate engine', () => {
  let restate: RestateServer;
  let worker: Worker;
  let upstream: FakeServer;
  let proxy: RunningServer;

  beforeAll(async () => {
    upstream = await startRecallUpstream({ window: WINDOW, files: FILES });
    restate = new RestateServer(install!);
    await restate.start();
    worker = await startWorker(install!, { WORKER_CAPACITY: String(WINDOW) });
    await restate.register(`http://127.0.0.1:${worker.port}`);
    proxy = await startServer({
      port: 0,
      capacity: WINDOW,
      engine: 'restate',
      restateIngress: restate.ingress,
      anthropicUpstream: upstream.url,
      http: { retries: 0 },
      // No clearing, so the loop compacts and a summary replaces the first results.
      session: { policy: { enabled: false, clearWhenPassBuysFewerTurns: 0 } },
    });
  });

  afterAll(async () => {
    await proxy?.close();
    if (worker) await stopWorker(worker);
    await restate?.dispose();
    await upstream?.close();
  });

  /**
   * An Anthropic agent loop reading the files the model asks for; every result but the newest
   * two it sends cleared, so the first file is in no request it sends after the third.
   */
  async function clientThatClears() {
    const client = new Anthropic({ apiKey: 'sk-test', baseURL: proxy.url, maxRetries: 0 });
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: RECALL_TASK }];
    const tools = [
      { name: READ_FILE.name, description: READ_FILE.description, input_schema: READ_FILE.parameters },
    ];
    const recalls: number[] = [];
    const results: Anthropic.ToolResultBlockParam[] = [];
    for (let step = 0; step < 20; step++) {
      const params = { model: 'claude-sonnet-4-6', max_tokens: 512, system: SYSTEM, tools, messages };
      const answer = await client.messages
        .create(params, { headers: { 'x-compactor-session': SESSION } })
        .withResponse();
      recalls.push(Number(answer.response.headers.get('x-compactor-recalls') ?? 0));
      messages.push({ role: 'assistant', content: answer.data.content });
      const calls = answer.data.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
      if (calls.length === 0) {
        const final = answer.data.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
        return { final, recalls };
      }
      const n = Number(/\d+/.exec((calls[0].input as { path: string }).path)![0]);
      const result = {
        type: 'tool_result' as const,
        tool_use_id: calls[0].id,
        content: recallFile(n, FILE_TOKENS),
      };
      results.push(result);
      for (const old of results.slice(0, -2)) old.content = CLEARED_BY_CLIENT;
      messages.push({ role: 'user', content: [result] });
    }
    return { final: '', recalls };
  }

  it('N1/C6: a result a summary replaced and the client no longer sends is recalled by its id from what Restate stored; its span id answers its list', async () => {
    const seen = await clientThatClears();
    expect(seen.final).toBe(RECALL_FINAL(markerOf(0)));
    expect(seen.final).not.toBe(LOST);
    expect(seen.recalls.at(-1)).toBe(1);
    expect(upstream.violations).toEqual([]);

    // Before the recall the model saw the summary, not the file: the id came from its pointer line.
    const before = wirePrompt('anthropic', upstream.requests.at(-2)!.body);
    const texts = before.messages.flatMap((m) => m.texts).join('\n');
    expect(texts).not.toContain(markerOf(0));
    expect(texts).toContain('## Recall ids');
    const original = recallFile(0, FILE_TOKENS);
    const pointer = new RegExp(`^- (r-[0-9a-f]{8}) read_file: ${recallPath(0)}`, 'm').exec(texts);
    expect(pointer?.[1]).toBeDefined();
    // The client sent the first result cleared: only the store could answer.
    const sent = upstream.requests.at(-2)!.raw;
    expect(sent).not.toContain(markerOf(0));

    // The recall round carried the original, whole.
    const round = wirePrompt('anthropic', upstream.requests.at(-1)!.body);
    expect(round.messages.at(-1)!.texts.join('\n')).toBe(original);

    // The session object answers the same at the ingress, and its span id lists the first file's id.
    type Answer = { text: string; found: boolean };
    const direct = await restate.call<Answer>('compactorSessionConversation', SESSION, 'recall', {
      id: pointer![1],
    });
    expect(direct).toEqual({ text: original, found: true });
    const span = /^- (s-[0-9a-f]{8}) lists every result replaced here/m.exec(texts)?.[1];
    expect(span).toBeDefined();
    const list = await restate.call<Answer>('compactorSessionConversation', SESSION, 'recall', { id: span });
    expect(list.found).toBe(true);
    expect(list.text.split('\n')[0]).toMatch(
      new RegExp(`^${span}: all \\d+ tool results that summaries replaced`),
    );
    expect(list.text).toContain(`- ${pointer![1]} read_file: ${recallPath(0)}`);
    // A client that starts its list over (it compacted it itself) is on a new branch; the ids
    // the model saw before still resolve, from the branch they were stored on.
    const restart = await fetch(`${proxy.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-test', 'x-compactor-session': SESSION },
      body: JSON.stringify({
        model: 'claude-sonnet-4-6',
        max_tokens: 512,
        system: SYSTEM,
        messages: [{ role: 'user', content: `Earlier work: ${pointer![1]} holds the first file.` }],
      }),
    });
    expect(restart.status).toBe(200);
    await restart.text();
    const point = await restate.call<{ branch: number }>('compactorSessionConversation', SESSION, 'state');
    expect(point.branch).toBe(1);
    const later = await restate.call<Answer>('compactorSessionConversation', SESSION, 'recall', {
      id: pointer![1],
      range: { start: 1, end: 1 },
    });
    expect(later).toEqual({
      text: `lines 1-1 of ${original.split('\n').length} of ${pointer![1]}:\n// marker: ${markerOf(0)}`,
      found: true,
    });
    // An id nobody stored, and arguments that are not a recall call, are answered as such.
    const unknown = await restate.call<Answer>('compactorSession', SESSION, 'recall', { id: 'r-00000000' });
    expect(unknown).toEqual({
      text: 'recall: no tool result with id r-00000000 in this session',
      found: false,
    });
    const bad = await restate.call<Answer>('compactorSession', SESSION, 'recall', { range: 3 });
    expect(bad.found).toBe(false);
    expect(bad.text).toMatch(/^recall: /);
  });
});
