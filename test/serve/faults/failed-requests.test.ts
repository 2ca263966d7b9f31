import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/index.js';
import { deferred, type Deferred } from '#support/deferred.js';
import {
  cleanUp,
  fakeUpstream,
  gate,
  post,
  startServe,
  storedMessages,
  tempDir,
  type Serve,
} from './harness.js';

/**
 * A failed request never stores its turn twice: a refused request, an upstream error, or a
 * process killed with SIGKILL in the middle of a request (a summary call included) followed
 * by a retry leaves every message of the conversation stored once, and the model never
 * receives a message twice.
 */

afterAll(() => freeEncoders());
afterEach(cleanUp);

const SUMMARY = 'checkpoint of an agent session';
const TAG = /\[S\d+[TA]\d+\]/g;
const tagsIn = (text: string) => text.match(TAG) ?? [];

describe('R1/R2: compactor serve: a failed request does not store its turn twice', () => {
  it('three refused tries (two by the proxy, one by the upstream) then a good one store the task once', async () => {
    const upstream = await fakeUpstream();
    const cwd = tempDir();
    const serve = await startServe(upstream.url, cwd);
    const task = { role: 'user', content: 'TASK: rename the billing module.' };
    const send = (system: string) =>
      post(
        serve.url,
        '/v1/chat/completions',
        { model: 'gpt-4o', max_tokens: 256, messages: [{ role: 'system', content: system }, task] },
        { headers: { 'x-compactor-session': 'retried' } },
      );
    // A system prompt the window cannot hold: the proxy refuses, twice.
    const huge = 'Follow every house rule listed here. '.repeat(3_000);
    for (let i = 0; i < 2; i++) expect((await send(huge)).status).toBe(400);
    // The upstream refuses the next one.
    upstream.script.push({ kind: 'status', status: 400, body: { error: { message: 'try again' } } });
    expect((await send('You review code.')).status).toBe(400);
    const good = await send('You review code.');
    expect(good.status).toBe(200);
    expect(storedMessages(join(cwd, 'sessions')).get('retried')).toHaveLength(1);
    const last = upstream.requests.at(-1)!.raw;
    expect(last.split('TASK: rename the billing module.')).toHaveLength(2);
  });

  it('SIGKILL at random points under 10 concurrent sessions, then retries: nothing stored twice, nothing lost, nothing sent twice', async () => {
    const upstream = await fakeUpstream();
    const cwd = tempDir();
    const dataDir = join(cwd, 'sessions');
    let serve = await startServe(upstream.url, cwd);
    // The server of the moment, and a promise of the next one once it has been killed.
    const epoch: Epoch = { serve, next: deferred<Serve>(), killed: new Set() };
    const SESSIONS = 10;
    const TURNS = 6;
    const clients = Array.from({ length: SESSIONS }, (_, s) => runClient(s, TURNS, epoch));
    const allDone = Promise.all(clients);
    // A seeded draw of which upstream request to kill the process in (a summary call or a forward).
    let seed = Number(process.env.FC_SEED ?? 20_261_204) >>> 0;
    const draw = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) >>> 0) >>> 8) % n;
    const kills: string[] = [];
    // One kill in the middle of the first summary call, then two at a drawn upstream request.
    for (const target of ['summary call', 'drawn', 'drawn'] as const) {
      const held = deferred<string>();
      const kind = () => (upstream.requests.at(-1)!.raw.includes(SUMMARY) ? 'summary call' : 'forward');
      const never = gate();
      if (target === 'drawn')
        upstream.script = [
          ...Array.from({ length: 3 + draw(40) }, () => undefined),
          { kind: 'hold', until: never.promise, onHeld: () => held.resolve(kind()) },
        ];
      else
        // Every request is held as it arrives and let go at once unless it is a summary call.
        upstream.script = Array.from({ length: 400 }, () => {
          const own = gate();
          return {
            kind: 'hold' as const,
            until: own.promise,
            onHeld: () => (kind() === 'summary call' ? held.resolve(kind()) : own.resolve()),
          };
        });
      const what = await Promise.race([held.promise, allDone.then(() => undefined)]);
      if (what === undefined) break;
      kills.push(what);
      epoch.killed.add(serve);
      serve.cli.child.kill('SIGKILL');
      await serve.cli.done;
      upstream.script = [];
      serve = await startServe(upstream.url, cwd);
      const next = epoch.next;
      epoch.serve = serve;
      epoch.next = deferred<Serve>();
      next.resolve(serve);
    }
    const conversations = await allDone;
    expect(kills).toContain('summary call');
    if (process.env.FAULTS_VERBOSE) process.stderr.write(`killed during: ${kills.join(', ')}\n`);
    const stored = storedMessages(dataDir);
    for (let s = 0; s < SESSIONS; s++) {
      const sent = conversations[s];
      // One branch per session, holding every message the client sent, once, in order (the
      // last answer was never sent back).
      expect([...stored.keys()].filter((k) => k.startsWith(`s${s}.`) || k === `s${s}`)).toEqual([`s${s}`]);
      expect(stored.get(`s${s}`)!.flatMap((m) => tagsIn(JSON.stringify(m)))).toEqual(sent.slice(0, -1));
      // No request the model answered held a message twice; the last held the last question once.
      const forwards = upstream.requests.filter(
        (r) => r.headers['x-test-client'] === `s${s}` && !r.raw.includes(SUMMARY),
      );
      for (const r of forwards) {
        const tags = tagsIn(r.raw);
        expect(new Set(tags).size).toBe(tags.length);
      }
      expect(tagsIn(forwards.at(-1)!.raw).filter((t) => t === `[S${s}T${PRIOR + TURNS - 1}]`)).toHaveLength(
        1,
      );
    }
    expect(upstream.requests.filter((r) => r.raw.includes(SUMMARY)).length).toBeGreaterThan(0);
  });
});

const PRIOR = 12;

/** The process of the moment, the next one once it has been killed, and those killed. */
interface Epoch {
  serve: Serve;
  next: Deferred<Serve>;
  killed: Set<Serve>;
}

/** Text of about 600 tokens, tagged with who wrote it and when. */
const userText = (s: number, t: number) =>
  `[S${s}T${t}] ` +
  Array.from({ length: 60 }, (_, k) => `item ${t}.${k} of file ${(s * 31 + t * 7 + k) % 97}`).join('; ');

/**
 * One client: `turns` questions, each sent until answered; a request that fails because the
 * process died is sent again to the next process. Resolves to the tags of what it sent, in order.
 */
async function runClient(s: number, turns: number, epoch: Epoch): Promise<string[]> {
  const messages: Array<{ role: string; content: string }> = [
    { role: 'system', content: 'You review code.' },
  ];
  const tags: string[] = [];
  // A conversation that already nearly fills the window: its first request compacts.
  for (let t = 0; t < PRIOR; t++) {
    messages.push(
      { role: 'user', content: userText(s, t) },
      { role: 'assistant', content: userText(s, t).replace('T', 'A') },
    );
    tags.push(`[S${s}T${t}]`, `[S${s}A${t}]`);
  }
  for (let t = PRIOR; t < PRIOR + turns; t++) {
    messages.push({ role: 'user', content: userText(s, t) });
    tags.push(`[S${s}T${t}]`);
    let reply: string | undefined;
    while (reply === undefined) {
      const { serve, next } = epoch;
      try {
        const res = await post(
          serve.url,
          '/v1/chat/completions',
          { model: 'gpt-4o', max_tokens: 256, messages },
          { headers: { 'x-compactor-session': `s${s}`, 'x-test-client': `s${s}` } },
        );
        const body = (await res.json()) as any;
        if (res.status !== 200) throw new Error(`status ${res.status}: ${JSON.stringify(body)}`);
        reply = String(body.choices[0].message.content);
      } catch (e) {
        // Only the process the test killed may fail a request; anything else fails the test.
        if (!epoch.killed.has(serve)) throw e;
        await next.promise;
      }
    }
    messages.push({ role: 'assistant', content: `${reply} [S${s}A${t}]` });
    tags.push(`[S${s}A${t}]`);
  }
  return tags;
}
