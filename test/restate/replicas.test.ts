import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/index.js';
import { conversationName } from '#src/restate/conversation-object.js';
import { OBJECT_NAME } from '#src/restate/session-object.js';
import { startFakeAgentUpstream, type FakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import { closeAll, type Fault, type RecordedRequest } from '#dev/fakes/fake-http.js';
import * as harness from '#dev/restate/harness.js';
import { startServeCli, stopRunningClis, type CliChild } from '#support/compiled-cli.js';
import { RESTATE_TEST_MS, restateSuite } from '#support/time-limits.js';

/**
 * Replicas that share sessions: three `compactor serve --engine restate` processes behind a
 * round-robin TCP balancer, two workers behind another, one real Restate server, twenty agent
 * sessions at once. A proxy is killed (SIGKILL) while the summary of its request is being
 * written, and a worker while it writes another one; the clients retry through the balancer.
 * Nothing may be lost or stored twice, the model must get every step once, and each
 * compaction must be paid with one answered summary. Needs the compiled CLI (`npm run build`).
 */

const { install, describeWithRestate } = restateSuite();
jest.setTimeout(RESTATE_TEST_MS);

const WINDOW = 16_000;
const SESSIONS = 20;
const STEPS = 7;
/** The session whose proxy is killed mid-summary, and the one whose worker is. */
const PROXY_KILL = 0;
const WORKER_KILL = 1;
const READ_TOOL = { name: 'read', input_schema: { type: 'object', properties: {} } };

afterAll(() => freeEncoders());

const sessionKey = (i: number) => `replica-${i}`;
const callId = (i: number, n: number) => `s${i}c${n}`;

/** One Anthropic tool step of session `i`: a call and its ~3,000-token result. */
const step = (i: number, n: number) => [
  { role: 'assistant', content: [{ type: 'tool_use', id: callId(i, n), name: 'read', input: { n } }] },
  {
    role: 'user',
    content: [
      {
        type: 'tool_result',
        tool_use_id: callId(i, n),
        content: `session ${i} file ${n}: ${'lorem ipsum dolor '.repeat(1000)}`,
      },
    ],
  },
];

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A POST on a new connection (so the balancer places each request); `onConnect` gets the local port. */
function post(url: string, headers: Record<string, string>, body: string, onConnect: (port: number) => void) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
        res.on('error', reject);
      },
    );
    req.on('socket', (s) => s.once('connect', () => onConnect(s.localPort!)));
    req.on('error', reject);
    req.end(body);
  });
}

/** A promise with its resolve, for events one part of the test waits for. */
function signal<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The worker a summary request came from: each has a key of its own. */
const writer = (req: RecordedRequest) => Number(/sk-worker-(\d)/.exec(String(req.headers.authorization))![1]);

/** The session a summary request is for: every one restates the session's first message. */
const sessionOf = (req: RecordedRequest) => Number(/Session (\d+):/.exec(req.raw)?.[1] ?? -1);

describeWithRestate('replicas on Restate', () => {
  let restate: harness.RestateServer;
  let agent: FakeAgentUpstream;
  let summaries: FakeAgentUpstream;
  const workers: harness.Worker[] = [];
  const proxies: { cli: CliChild; port: number }[] = [];
  const balancers: Awaited<ReturnType<typeof harness.startBalancer>>[] = [];
  let cwd: string;

  // The summary calls of the two sessions whose writer is killed are held until the kill.
  const held = {
    proxy: signal<RecordedRequest>(),
    worker: signal<RecordedRequest>(),
    releaseProxy: signal(),
    releaseWorker: signal(),
  };
  const closed = new Map([PROXY_KILL, WORKER_KILL].map((s) => [s, signal()]));
  // Every summary call: its session, its body and the worker that made it.
  const calls: { session: number; raw: string; worker: number }[] = [];
  const aborted = new Map<number, number>();
  let releasedProxy = false;
  const holdOnce = new Set<number>();
  const faultFor = (req: RecordedRequest): Fault | undefined => {
    const s = sessionOf(req);
    calls.push({ session: s, raw: req.raw, worker: writer(req) });
    if ((s !== PROXY_KILL && s !== WORKER_KILL) || holdOnce.has(s)) return undefined;
    holdOnce.add(s);
    const proxyKill = s === PROXY_KILL;
    return {
      kind: 'hold',
      until: proxyKill ? held.releaseProxy.promise : held.releaseWorker.promise,
      onHeld: () => (proxyKill ? held.proxy : held.worker).resolve(req),
      // Closed before it was let go: its writer died, nobody got (or paid for) the answer.
      onClosed: () => {
        if (!proxyKill || !releasedProxy) aborted.set(s, (aborted.get(s) ?? 0) + 1);
        closed.get(s)!.resolve();
      },
    };
  };

  // Each session's conversation as its client sends it, and its request at step `n`.
  const conversations = new Map<number, unknown[]>();
  const requestOf = (i: number, n: number, maxTokens = 256) => ({
    body: JSON.stringify({
      model: 'claude-sonnet-4-6',
      max_tokens: maxTokens,
      tools: [READ_TOOL],
      messages: conversations.get(i),
    }),
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'sk-client',
      'x-compactor-session': sessionKey(i),
      'x-test-loop': `s${i}`,
      'x-test-step': String(n),
      'x-test-steps': '100',
    },
  });
  const toolResults = async (i: number) =>
    (await restate.sessionEvents(sessionKey(i))).flatMap((e) =>
      e.type === 'message.appended' && e.message.role === 'tool' ? [e.message.toolCallId] : [],
    );
  const sentAt = (i: number, n: number) =>
    agent.requests.filter(
      (r) => r.headers['x-test-loop'] === `s${i}` && r.headers['x-test-step'] === String(n),
    );

  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'compactor-replicas-'));
    agent = await startFakeAgentUpstream({ window: WINDOW });
    summaries = await startFakeAgentUpstream({ window: WINDOW, faultFor });
    restate = new harness.RestateServer(install!);
    await restate.start();
    // Each worker writes summaries with its own key, so a summary request names its worker.
    const route = JSON.stringify({
      provider: 'openai',
      model: 'gpt-4o',
      baseUrl: summaries.url,
      apiKeyEnv: 'SUMMARY_KEY',
    });
    // The workers and the proxies start side by side; the proxies need no worker to start.
    const args = harness.restateServeArgs(restate, agent.url, WINDOW);
    const [started, serving] = await Promise.all([
      Promise.all(
        [0, 1].map((k) =>
          harness.startWorker(install!, { WORKER_ROUTE: route, SUMMARY_KEY: `sk-worker-${k}` }),
        ),
      ),
      Promise.all([0, 1, 2].map(() => startServeCli(args, { cwd }))),
    ]);
    workers.push(...started);
    for (const { cli, url } of serving) proxies.push({ cli, port: Number(new URL(url).port) });
    balancers.push(await harness.startBalancer(workers.map((w) => w.port)));
    await restate.register(balancers[0]!.url);
    balancers.push(await harness.startBalancer(proxies.map((p) => p.port)));
  });

  afterAll(async () => {
    held.releaseProxy.resolve();
    held.releaseWorker.resolve();
    await stopRunningClis();
    await Promise.all(workers.map((w) => harness.stopWorker(w)));
    await Promise.all(balancers.map((b) => b.close()));
    await restate?.dispose();
    await closeAll(agent, summaries);
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it(`R3/N1: 3 proxies and 2 workers serve ${SESSIONS} sessions; a proxy and a worker killed mid-summary lose nothing; one summary per compaction, made again only when its worker died before recording it`, async () => {
    const started = Date.now();
    const front = balancers[1]!;
    const inFlight = new Map<number, number>();
    const retried = new Map<number, number>();
    // Tries of each step whose connection broke (its proxy died, maybe after forwarding it).
    const broken = new Map<string, number>();
    const firstFailure = signal();
    const compactedAt = new Map<number, number[]>();

    /** Session `i`'s agent loop through the balancer; a request whose proxy died is sent again. */
    const drive = async (i: number) => {
      conversations.set(i, [{ role: 'user', content: `Session ${i}: read every file and report.` }]);
      for (let n = 0; n < STEPS; n++) {
        conversations.get(i)!.push(...step(i, n));
        const { body, headers } = requestOf(i, n);
        let answer: Answer | undefined;
        for (let attempt = 0; answer === undefined; attempt++) {
          try {
            answer = await post(`${front.url}/v1/messages`, headers, body, (port) => inFlight.set(i, port));
          } catch (e) {
            // The connection broke: its proxy died. Any other proxy takes the same request.
            if (attempt >= 3) throw e;
            retried.set(i, (retried.get(i) ?? 0) + 1);
            broken.set(`${i}:${n}`, attempt + 1);
            if (i === PROXY_KILL) firstFailure.resolve();
          }
        }
        expect([i, n, answer.status, answer.status === 200 ? '' : answer.text]).toEqual([i, n, 200, '']);
        if (answer.headers['x-compactor-compacted'] === 'true')
          compactedAt.set(i, [...(compactedAt.get(i) ?? []), n]);
      }
    };
    const runs = Promise.all(Array.from({ length: SESSIONS }, (_, i) => drive(i)));
    runs.catch(() => undefined);

    // The proxy that holds the request whose summary is being written dies; the client retries.
    await held.proxy.promise;
    const victim = proxies.find((p) => p.port === front.routes.get(inFlight.get(PROXY_KILL)!))!;
    victim.cli.child.kill('SIGKILL');
    expect((await victim.cli.done).signal).toBe('SIGKILL');
    await firstFailure.promise;
    // The worker writing another session's summary dies; Restate runs that turn on the other one.
    const killed = writer(await held.worker.promise);
    await harness.stopWorker(workers[killed]!, 'SIGKILL');
    // Its held call is cut, and so is the other held one when the same worker wrote it.
    await closed.get(WORKER_KILL)!.promise;
    if (writer(await held.proxy.promise) === killed) await closed.get(PROXY_KILL)!.promise;
    releasedProxy = true;
    held.releaseProxy.resolve();
    await runs;
    const seconds = (Date.now() - started) / 1000;

    // Every session holds each step once, in order, across its archived chunks and its state.
    const boundaries = new Map<number, number>();
    for (let i = 0; i < SESSIONS; i++) {
      const events = await restate.sessionEvents(sessionKey(i));
      expect(events.map((e) => e.seq)).toEqual(events.map((_, k) => k + 1));
      expect(await toolResults(i)).toEqual(Array.from({ length: STEPS }, (_, n) => callId(i, n)));
      boundaries.set(i, events.filter((e) => e.type === 'thread.compact_boundary').length);
    }

    // One summary per compaction: a summary request is made again only when the worker that
    // made it died before its answer was recorded (the same request, then from the other worker).
    let again = 0;
    for (let i = 0; i < SESSIONS; i++) {
      expect([i, boundaries.get(i)! >= 1]).toEqual([i, true]);
      expect([i, compactedAt.get(i)?.length ?? 0]).toEqual([i, boundaries.get(i)]);
      const mine = calls.filter((c) => c.session === i);
      const bodies = new Set(mine.map((c) => c.raw));
      expect([i, bodies.size]).toEqual([i, boundaries.get(i)]);
      for (const raw of bodies) {
        const same = mine.filter((c) => c.raw === raw);
        again += same.length - 1;
        // Every copy but one came from the killed worker, and the one that counted from the
        // other. (Arrival order proves nothing: bytes the killed worker sent just before dying
        // can be read here after its exit was seen.)
        if (same.length > 1)
          expect([i, same.map((c) => c.worker).sort()]).toEqual([
            i,
            [...same.slice(1).map(() => killed), 1 - killed].sort(),
          ]);
      }
    }
    expect(aborted.get(WORKER_KILL)).toBe(1);
    expect(again).toBeGreaterThanOrEqual(1);
    expect(calls.filter((c) => c.session < 0)).toEqual([]);

    // The retry through another proxy joined the turn the dead proxy had started: one per step.
    expect(retried.get(PROXY_KILL)).toBeGreaterThanOrEqual(1);
    const turns = await restate.invocations(conversationName(OBJECT_NAME), 'turn', sessionKey(PROXY_KILL));
    expect(turns[sessionKey(PROXY_KILL)]).toBe(STEPS);

    // The model got every step once (a step whose proxy died after forwarding it, once more with
    // each retry: the model call was made), each with no result twice and none missing after the summary.
    for (let i = 0; i < SESSIONS; i++)
      for (let n = 0; n < STEPS; n++) {
        const sent = sentAt(i, n);
        const most = 1 + (broken.get(`${i}:${n}`) ?? 0);
        expect([i, n, sent.length >= 1 && sent.length <= most]).toEqual([i, n, true]);
        const ids: string[] = (sent.at(-1)!.body.messages as { content: unknown }[]).flatMap((m) =>
          Array.isArray(m.content)
            ? m.content.flatMap((b: { type?: string; tool_use_id?: string }) =>
                b.type === 'tool_result' ? [b.tool_use_id!] : [],
              )
            : [],
        );
        const first = n - ids.length + 1;
        expect([i, n, ids]).toEqual([
          i,
          n,
          Array.from({ length: ids.length }, (_, k) => callId(i, first + k)),
        ]);
        if (first > 0) expect(sent.at(-1)!.raw.includes('summary written at step')).toBe(true);
      }
    expect(agent.violations).toEqual([]);
    expect(summaries.violations).toEqual([]);
    const compactions = [...boundaries.values()].reduce((a, b) => a + b, 0);
    process.stdout.write(
      `replicas: ${SESSIONS} sessions x ${STEPS} steps, ${compactions} compactions (at steps ${[...new Set([...compactedAt.values()].flat())].join(', ')}), ${calls.length} summary calls (${again} made again after the worker died), ${[...retried.values()].reduce((a, b) => a + b, 0)} client retries, ${seconds.toFixed(1)} s\n`,
    );
  });

  it('R3/N1: two requests of one session sent at once through two proxies both succeed, one after the other, and the step is stored once', async () => {
    const i = 2;
    conversations.get(i)!.push(...step(i, STEPS));
    const living = proxies.filter((p) => p.cli.child.exitCode === null && p.cli.child.signalCode === null);
    // Two output limits, so two calls (no idempotency key in common): Restate runs one, then the other.
    const answers = await Promise.all(
      [256, 300].map((max, k) => {
        const { body, headers } = requestOf(i, STEPS, max);
        return post(`http://127.0.0.1:${living[k]!.port}/v1/messages`, headers, body, () => undefined);
      }),
    );
    expect(answers.map((a) => [a.status, a.status === 200 ? '' : a.text])).toEqual([
      [200, ''],
      [200, ''],
    ]);
    expect(await toolResults(i)).toEqual(Array.from({ length: STEPS + 1 }, (_, n) => callId(i, n)));
    const turns = await restate.invocations(conversationName(OBJECT_NAME), 'turn', sessionKey(i));
    expect(turns[sessionKey(i)]).toBe(STEPS + 2);
    expect(sentAt(i, STEPS)).toHaveLength(2);
  });
});
