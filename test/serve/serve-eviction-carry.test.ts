import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer, type ServeOptions } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { startFakeAgentUpstream, type FakeAgentUpstream } from '#dev/fakes/agent-upstream.js';

/**
 * A session closed to stay under --max-sessions and reopened from --data-dir on its next
 * request decides as one that stayed open: two conversations take turns, with one session open
 * at a time and with no cap, and make the same compactions and send the same requests upstream.
 */

afterAll(() => freeEncoders());

const started: Array<RunningServer | FakeAgentUpstream> = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const CAPACITY = 6_000;

/** A conversation (Chat Completions body) after `turns` answered turns, each long enough to fill the window in a few. */
function growing(topic: string, turns: number) {
  const messages: Array<{ role: string; content: string }> = [
    { role: 'system', content: 'You review code.' },
    { role: 'user', content: `Review the ${topic} module.` },
  ];
  for (let i = 0; i < turns; i++)
    messages.push(
      {
        role: 'assistant',
        content: `Notes ${i} on the ${topic} module:\n${`- line ${i} of ${topic} looks fine\n`.repeat(100)}`,
      },
      { role: 'user', content: `Go on with part ${i + 2} of ${topic}.` },
    );
  return { model: 'gpt-4o', messages };
}

/** Plays two conversations in turn on a fresh server; returns what each request did and what went upstream. */
async function play(options: ServeOptions) {
  const dataDir = mkdtempSync(join(tmpdir(), 'compactor-evict-carry-'));
  dirs.push(dataDir);
  const upstream = await startFakeAgentUpstream({ window: CAPACITY });
  const server = await startServer({
    port: 0,
    openaiUpstream: upstream.url,
    http: { retries: 0 },
    capacity: CAPACITY,
    dataDir,
    ...options,
  });
  started.push(upstream, server);
  const seen: string[] = [];
  for (let turn = 0; turn < 12; turn++)
    for (const topic of ['parser', 'printer']) {
      const res = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-eviction-test' },
        body: JSON.stringify(growing(topic, turn)),
      });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      const h = (name: string) => res.headers.get(`x-compactor-${name}`);
      seen.push(`${topic} ${turn}: ${h('compacted')} ${h('tokens-before')} ${h('tokens-after')}`);
    }
  return { seen, upstream: upstream.requests.map((r) => JSON.stringify(r.body)) };
}

describe('serve: a session evicted under --max-sessions keeps its carry', () => {
  it('R2: two conversations in turn with --max-sessions 1 make the same compactions and requests as with no cap', async () => {
    const open = await play({});
    const evicted = await play({ maxSessions: 1 });
    expect(evicted.seen).toEqual(open.seen);
    expect(evicted.upstream).toEqual(open.upstream);
    // The conversations must reach compaction, where the carried cache cycle changes the decision.
    expect(open.seen.filter((s) => s.includes(': true ')).length).toBeGreaterThan(0);
  });
});
