import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { freeEncoders } from '#src/estimate/index.js';
import type { RunningServer, ServeOptions } from '#src/serve/index.js';
import { startFakeAgentUpstream, type FakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import type { Fault, RecordedRequest } from '#support/fake-http.js';
import { OPENING, stepRequest, type Chat } from '#support/serve/growing-chat.js';
import { COMPACTING_POLICY, startProxyTo } from '#support/serve/proxy.js';

/**
 * A request whose upstream answer is not a success leaves its session exactly as it was: the
 * sessions endpoint shows what it showed before, the session directory holds nothing of it
 * (also for a server started afresh on it), and the client's next request, a different one,
 * continues the session instead of branching it. A summary the failed request paid for is
 * given to its retry, which makes no second summary call.
 */

afterAll(() => freeEncoders());

const KEY = 'sk-failed-turn-test-credential-123';
const WINDOW = 16_000;
const SESSION = 'failed-turn';
const FAILED_TEXT = 'FAILED-TURN: this question never got an answer.';
const SUMMARY_PROMPT = 'You are writing a checkpoint of an agent session';
const started: Array<{ close(): Promise<void> }> = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The fake model; the first request (not a summary) holding `marker` gets `fault`. */
async function fakeModel(fault: Fault, marker = FAILED_TEXT): Promise<FakeAgentUpstream> {
  let failed = false;
  const faultFor = (req: RecordedRequest): Fault | undefined => {
    if (failed || !req.raw.includes(marker) || req.raw.includes(SUMMARY_PROMPT)) return undefined;
    failed = true;
    return fault;
  };
  const upstream = await startFakeAgentUpstream({ window: WINDOW, faultFor });
  started.push(upstream);
  return upstream;
}

async function proxy(upstream: FakeAgentUpstream, options: ServeOptions = {}): Promise<RunningServer> {
  const server = await startProxyTo(upstream, WINDOW, { http: { retries: 0, timeoutMs: 2_000 }, ...options });
  started.push(server);
  return server;
}

function client(server: RunningServer): OpenAI {
  return new OpenAI({
    apiKey: KEY,
    baseURL: `${server.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { 'x-compactor-session': SESSION },
  });
}

const ask = (server: RunningServer, messages: Chat[]) =>
  client(server).chat.completions.create({ model: 'gpt-4o', messages });

const failure = (server: RunningServer, messages: Chat[]) =>
  ask(server, messages).then(
    () => undefined,
    (e: unknown) => e,
  );

async function sessionState(server: RunningServer): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}/compactor/sessions/${SESSION}`);
  return (await res.json()) as Record<string, unknown>;
}

/** Every file under `dir`, as text. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [readFileSync(path, 'utf8')];
  });
}

const FAULTS: Array<[string, Fault]> = [
  [
    '500',
    { kind: 'status', status: 500, body: { error: { message: 'upstream broke', type: 'server_error' } } },
  ],
  ['a reset connection', { kind: 'reset' }],
  ['a timeout (502)', { kind: 'hang' }],
];

describe('compactor serve: a request that fails upstream leaves its session as it was', () => {
  for (const withDir of [false, true])
    for (const [what, fault] of FAULTS)
      it(`${what}${withDir ? ', with --data-dir' : ''}: nothing of the failed turn is kept; the next, different request continues the session on one branch`, async () => {
        const upstream = await fakeModel(fault);
        const dataDir = withDir ? mkdtempSync(join(tmpdir(), 'failed-turn-')) : undefined;
        if (dataDir !== undefined) dirs.push(dataDir);
        const server = await proxy(upstream, dataDir !== undefined ? { dataDir } : {});
        const first = await ask(server, OPENING);
        const answered: Chat[] = [
          ...OPENING,
          { role: 'assistant', content: first.choices[0]!.message.content },
        ];
        const before = await sessionState(server);

        const error = await failure(server, [...answered, { role: 'user', content: FAILED_TEXT }]);
        expect(error).toBeInstanceOf(OpenAI.APIError);
        expect(await sessionState(server)).toEqual(before);

        const next: Chat[] = [...answered, { role: 'user', content: 'Now read the CHANGELOG.' }];
        const again = await ask(server, next);
        expect(again.choices[0]!.message.content).toBeTruthy();
        const after = await sessionState(server);
        expect(after.branches).toBe(1);
        expect(after.messages).toBe(next.length - 1); // the system prompt is not a message of the session
        if (dataDir === undefined) return;

        // The directory holds nothing of the failed turn, and a server started afresh on it continues.
        await server.close();
        started.splice(started.indexOf(server), 1);
        expect(filesUnder(dataDir).some((text) => text.includes('FAILED-TURN'))).toBe(false);
        expect(readdirSync(dataDir).some((name) => name.includes('.fork-'))).toBe(false);
        const fresh = await proxy(upstream, { dataDir });
        const later: Chat[] = [
          ...next,
          { role: 'assistant', content: again.choices[0]!.message.content },
          { role: 'user', content: 'Thanks.' },
        ];
        await ask(fresh, later);
        const reopened = await sessionState(fresh);
        expect(reopened.branches).toBe(1);
        expect(reopened.messages).toBe(later.length - 1);
        expect(readdirSync(dataDir).some((name) => name.includes('.fork-'))).toBe(false);
      });
});

/** The first step whose request compacts, found through a proxy of its own. */
async function firstCompactingStep(): Promise<number> {
  const upstream = await fakeModel({ kind: 'ok' });
  const server = await proxy(upstream, { session: { policy: COMPACTING_POLICY } });
  for (let n = 0; n < 20; n++) {
    const res = await client(server)
      .chat.completions.create({ model: 'gpt-4o', messages: stepRequest(n) })
      .withResponse();
    if (res.response.headers.get('x-compactor-compacted') === 'true') return n;
  }
  throw new Error('no step compacted');
}

describe('compactor serve: a summary the failed request paid for is not paid again', () => {
  for (const withDir of [false, true])
    it(`a compacting request fails upstream, its retry compacts with the same summary: one summary call in all${withDir ? ', with --data-dir' : ''}`, async () => {
      const compacting = await firstCompactingStep();
      expect(compacting).toBeGreaterThan(1);
      const upstream = await fakeModel({ kind: 'status', status: 500 }, `STEP-${compacting}-ASKED`);
      const dataDir = withDir ? mkdtempSync(join(tmpdir(), 'failed-turn-')) : undefined;
      if (dataDir !== undefined) dirs.push(dataDir);
      const server = await proxy(upstream, {
        ...(dataDir !== undefined ? { dataDir } : {}),
        session: { policy: COMPACTING_POLICY },
      });
      for (let n = 0; n < compacting; n++) await ask(server, stepRequest(n));
      expect(upstream.summaries).toHaveLength(0);
      const before = await sessionState(server);
      const turn = stepRequest(compacting);
      const error = await failure(server, turn);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      // The failed request compacted (and paid for one summary); its session is as it was.
      expect(upstream.summaries).toHaveLength(1);
      expect(await sessionState(server)).toEqual(before);

      const retried = await client(server)
        .chat.completions.create({ model: 'gpt-4o', messages: turn })
        .withResponse();
      expect(retried.response.headers.get('x-compactor-compacted')).toBe('true');
      expect(upstream.summaries).toHaveLength(1);
      const after = await sessionState(server);
      expect(after.branches).toBe(1);
      expect(after.summariesMade).toBe(1);
    });
});

describe('compactor serve: an answer the upstream began with 2xx completes the turn', () => {
  for (const withDir of [false, true])
    it(`the answer is cut after a 200: the turn is kept, and the client's retry of it continues the session without a message twice${withDir ? ', with --data-dir' : ''}`, async () => {
      const upstream = await fakeModel({ kind: 'malformed-json' });
      const dataDir = withDir ? mkdtempSync(join(tmpdir(), 'failed-turn-')) : undefined;
      if (dataDir !== undefined) dirs.push(dataDir);
      const server = await proxy(upstream, dataDir !== undefined ? { dataDir } : {});
      const first = await ask(server, OPENING);
      const turn: Chat[] = [
        ...OPENING,
        { role: 'assistant', content: first.choices[0]!.message.content },
        { role: 'user', content: FAILED_TEXT },
      ];
      expect(await failure(server, turn)).toBeDefined();
      expect((await sessionState(server)).messages).toBe(turn.length - 1);
      await ask(server, turn);
      const after = await sessionState(server);
      expect(after.messages).toBe(turn.length - 1);
      expect(after.branches).toBe(1);
      if (dataDir === undefined) return;
      await server.close();
      started.splice(started.indexOf(server), 1);
      const stored = filesUnder(dataDir).join('\n').split('FAILED-TURN').length - 1;
      expect(stored).toBe(1);
    });
});

describe('compactor serve: an edit of the conversation whose request fails leaves no new branch', () => {
  for (const withDir of [false, true])
    it(`the client rewrote its first question and the upstream failed: the session shows what it showed, the next request continues the old branch${withDir ? ', with --data-dir (no fork directory, no sync point of it)' : ''}`, async () => {
      const upstream = await fakeModel({ kind: 'status', status: 500 });
      const dataDir = withDir ? mkdtempSync(join(tmpdir(), 'failed-turn-')) : undefined;
      if (dataDir !== undefined) dirs.push(dataDir);
      const server = await proxy(upstream, dataDir !== undefined ? { dataDir } : {});
      const first = await ask(server, OPENING);
      const answered: Chat[] = [
        ...OPENING,
        { role: 'assistant', content: first.choices[0]!.message.content },
        { role: 'user', content: 'Now read the CHANGELOG.' },
      ];
      const second = await ask(server, answered);
      const before = await sessionState(server);
      const stored = dataDir !== undefined ? readdirSync(dataDir).sort() : [];

      const edited: Chat[] = [OPENING[0]!, { role: 'user', content: `${FAILED_TEXT} Read the LICENSE.` }];
      expect(await failure(server, edited)).toBeInstanceOf(OpenAI.APIError);
      expect(await sessionState(server)).toEqual(before);
      if (dataDir !== undefined) {
        expect(readdirSync(dataDir).sort()).toEqual(stored);
        expect(filesUnder(dataDir).some((text) => text.includes('FAILED-TURN'))).toBe(false);
      }

      const next: Chat[] = [
        ...answered,
        { role: 'assistant', content: second.choices[0]!.message.content },
        { role: 'user', content: 'Thanks.' },
      ];
      await ask(server, next);
      const after = await sessionState(server);
      expect(after.branches).toBe(1);
      expect(after.messages).toBe(next.length - 1);
      if (dataDir === undefined) return;
      await server.close();
      started.splice(started.indexOf(server), 1);
      expect(readdirSync(dataDir).some((name) => name.includes('.fork-'))).toBe(false);
      const fresh = await proxy(upstream, { dataDir });
      await ask(fresh, [
        ...next,
        { role: 'assistant', content: 'You are welcome.' },
        { role: 'user', content: 'Bye.' },
      ]);
      expect((await sessionState(fresh)).branches).toBe(1);
    });
});
