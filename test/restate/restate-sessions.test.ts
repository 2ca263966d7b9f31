import { afterAll, afterEach, beforeAll, expect, it, jest } from '@jest/globals';
import { msg, type Message } from '#src/messages/message.js';
import { restateStore, type ObjectSessionState, type ObjectTurnResult } from '#src/restate/index.js';
import { createCompactorSession } from '#src/session/index.js';
import { memoryStore, type BoundaryInfo } from '#src/store/index.js';
import { isSummaryMessage } from '#src/summary/index.js';
import { deferred, type Deferred } from '#support/deferred.js';
import type { FakeServer } from '#support/fake-http.js';
import { startFakeOpenAI } from '#support/fake-openai.js';
import { RestateServer, startBalancer, startWorker, stopWorker, type Worker } from '#dev/restate/harness.js';
import { growLongSession } from '#dev/restate/long-session.js';
import { agentSteps, templateSummary } from '#dev/restate/sessions.js';
import { RESTATE_TEST_MS, restateSuite } from '#support/time-limits.js';

/**
 * Sessions on a real Restate server (from npm, offline) served by two Node 24 worker
 * processes behind a balancer, each worker with its own fake provider on 127.0.0.1 (so a
 * summary request tells which worker sent it). Runs where the install exists (`.ci/run`
 * makes it and sets COMPACTOR_RESTATE_REQUIRED, so there a missing install fails).
 */

const { install, describeWithRestate } = restateSuite();
jest.setTimeout(RESTATE_TEST_MS);

const CAPACITY = 32_000;
/** 30 tool steps of 2,000 characters are over the threshold of a 32,000-token window. */
const STEPS = 30;
const OBJECT = 'compactorSession';
const ARCHIVE = 'compactorSessionArchive';

describeWithRestate('durable sessions on Restate: two workers, one server', () => {
  let server: RestateServer;
  let fakes: FakeServer[];
  let workers: Worker[];
  let balancer: Awaited<ReturnType<typeof startBalancer>>;
  const call = <T>(key: string, handler: string, body?: unknown) =>
    server.call<T>(OBJECT, key, handler, body);
  /**
   * Waits until the server holds the turn's snapshot. The worker writes it before the summary
   * call, but the write can reach the server after the call reaches the fake, so a kill sent at
   * once could land before it.
   */
  const untilSnapshotKept = async (key: string) => {
    while ((await call<ObjectSessionState>(key, 'state')).turn === null)
      await new Promise((resolve) => setTimeout(resolve, 20));
  };

  beforeAll(async () => {
    fakes = await Promise.all(
      [0, 1].map(() => startFakeOpenAI({ window: CAPACITY, summaryText: templateSummary() })),
    );
    server = new RestateServer(install!);
    await server.start();
    workers = await Promise.all(
      fakes.map((f) =>
        startWorker(install!, {
          WORKER_ROUTE: JSON.stringify({
            provider: 'openai-compatible',
            model: 'deepseek-chat',
            baseUrl: f.url,
            env: {},
          }),
          WORKER_CAPACITY: String(CAPACITY),
        }),
      ),
    );
    balancer = await startBalancer(workers.map((w) => w.port));
    await server.register(balancer.url);
  });

  afterAll(async () => {
    await balancer?.close();
    await Promise.all((workers ?? []).map((w) => stopWorker(w)));
    await server?.dispose();
    await Promise.all((fakes ?? []).map((f) => f.close()));
  });

  /** Holds a test set on the fake providers; released and cleared after each test, pass or fail. */
  const holds: Deferred<void>[] = [];
  const hold = () => {
    const release = deferred<void>();
    holds.push(release);
    return release;
  };
  afterEach(() => {
    for (const release of holds.splice(0)) release.resolve();
    for (const f of fakes) f.script.length = 0;
  });

  const summaryRequests = () =>
    fakes.map((f) => f.requests.filter((r) => r.path.endsWith('/chat/completions')).length);

  it('10 sessions driven at once: every turn compacts once, both workers serve, every message is kept', async () => {
    const keys = Array.from({ length: 10 }, (_, i) => `concurrent-${i}`);
    const results = await Promise.all(
      keys.map(async (key) => {
        await call(key, 'append', { messages: agentSteps(key, STEPS) });
        const first = await call<ObjectTurnResult>(key, 'runTurn');
        const second = await call<ObjectTurnResult>(key, 'runTurn', {
          pending: agentSteps(key, 1, 200, STEPS),
        });
        return { key, first, second, state: await call<ObjectSessionState>(key, 'state') };
      }),
    );
    for (const { key, first, second, state } of results) {
      expect(first).toMatchObject({ decision: 'compacted', strategy: 'local', summaryCalls: 1 });
      expect(second.decision).not.toBe('compacted');
      expect(state.boundaries).toHaveLength(1);
      expect(state.turn).toBeNull();
      expect(state.messagesRecorded).toBe(4 * (STEPS + 1));
      expect(state.history.filter(isSummaryMessage)).toHaveLength(1);
      // The step after the compaction is in the live history, in order.
      expect(state.history.slice(-4)).toEqual(agentSteps(key, 1, 200, STEPS));
    }
    // Both workers ran turns: each one's fake provider got summary requests.
    expect(summaryRequests().every((n) => n > 0)).toBe(true);
    // Over HTTP/1.1 a recorded step ends the request and Restate calls the handler again, which
    // replays the turn up to the step: one request per compaction means replays read the
    // recorded summary back instead of sending it again.
    expect(summaryRequests().reduce((a, b) => a + b)).toBe(keys.length);
  });

  it('one session is never written by two workers at once: 16 appends and 4 turns sent together lose nothing', async () => {
    const key = 'one-writer';
    const messages = agentSteps(key, 4);
    await Promise.all([
      ...messages.map((m) => call(key, 'append', { messages: [m] })),
      ...[0, 1, 2, 3].map(() => call(key, 'runTurn')),
    ]);
    const state = await call<ObjectSessionState>(key, 'state');
    // A second writer would read the records before the first wrote them, and one append would be lost.
    expect(state.messagesRecorded).toBe(16);
    const sorted = (list: readonly Message[]) => list.map((m) => JSON.stringify(m)).sort();
    expect(sorted(state.history)).toEqual(sorted(messages));
  });

  it('a turn call ended for good mid-summary leaves its snapshot; the next call with the same pending continues it and commits once', async () => {
    const key = 'killed-invocation';
    const history = agentSteps(key, STEPS);
    await call(key, 'append', { messages: history });
    const pending = agentSteps(key, 1, 200, STEPS);
    const arrived = deferred<void>();
    const release = hold();
    fakes.forEach((f) =>
      f.script.push({ kind: 'hold', until: release.promise, onHeld: () => arrived.resolve() }),
    );
    const sent = await fetch(`${server.ingress}/${OBJECT}/${key}/runTurn/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pending }),
    });
    const { invocationId } = (await sent.json()) as { invocationId: string };
    await arrived.promise;
    await untilSnapshotKept(key);
    const killed = await fetch(`${server.admin}/invocations/${invocationId}/kill`, { method: 'PATCH' });
    expect(killed.status).toBeLessThan(300);
    release.resolve();
    for (const f of fakes) f.script.length = 0; // the other worker's hold was never used
    const left = await call<ObjectSessionState>(key, 'state');
    expect(left.turn).not.toBeNull(); // nothing committed, the turn's snapshot is kept
    expect(left.messagesRecorded).toBe(history.length);

    expect(left.turn!.resumes).toBe(0);

    // The next call continues that snapshot: seen while its own summary call is held.
    const again = deferred<void>();
    const releaseAgain = hold();
    fakes.forEach((f) =>
      f.script.push({ kind: 'hold', until: releaseAgain.promise, onHeld: () => again.resolve() }),
    );
    const turn = call<ObjectTurnResult>(key, 'runTurn', { pending });
    await again.promise;
    const continuing = await call<ObjectSessionState>(key, 'state');
    expect(continuing.turn).toMatchObject({ turnId: left.turn!.turnId, resumes: 1 });
    expect(continuing.turn!.step).toBeGreaterThanOrEqual(left.turn!.step);
    releaseAgain.resolve();
    const result = await turn;
    for (const f of fakes) f.script.length = 0;
    expect(result).toMatchObject({ decision: 'compacted', summaryCalls: 1 });
    const state = await call<ObjectSessionState>(key, 'state');
    expect(state.turn).toBeNull();
    expect(state.boundaries).toHaveLength(1);
    expect(state.messagesRecorded).toBe(history.length + pending.length);
    expect(state.history.slice(-pending.length)).toEqual(pending);
  });

  it('a kept turn is not continued once messages were appended after it: the next call starts over on the new history', async () => {
    const key = 'appended-after-kill';
    const history = agentSteps(key, STEPS);
    await call(key, 'append', { messages: history });
    const pending = agentSteps(key, 1, 200, STEPS);
    const holdSummary = () => {
      const arrived = deferred<void>();
      const release = hold();
      fakes.forEach((f) =>
        f.script.push({ kind: 'hold', until: release.promise, onHeld: () => arrived.resolve() }),
      );
      return { arrived, release };
    };
    const first = holdSummary();
    const sent = await fetch(`${server.ingress}/${OBJECT}/${key}/runTurn/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pending }),
    });
    const { invocationId } = (await sent.json()) as { invocationId: string };
    await first.arrived.promise;
    await untilSnapshotKept(key);
    await fetch(`${server.admin}/invocations/${invocationId}/kill`, { method: 'PATCH' });
    first.release.resolve();
    for (const f of fakes) f.script.length = 0;
    expect((await call<ObjectSessionState>(key, 'state')).turn).not.toBeNull();

    const late = agentSteps(`${key}-late`, 1, 300, STEPS);
    await call(key, 'append', { messages: late });
    const second = holdSummary();
    const turn = call<ObjectTurnResult>(key, 'runTurn', { pending });
    await second.arrived.promise;
    expect((await call<ObjectSessionState>(key, 'state')).turn).toMatchObject({ resumes: 0 });
    second.release.resolve();
    expect(await turn).toMatchObject({ decision: 'compacted', summaryCalls: 1 });
    const state = await call<ObjectSessionState>(key, 'state');
    expect(state.turn).toBeNull();
    expect(state.messagesRecorded).toBe(history.length + late.length + pending.length);
    // The compaction summarized the new history, the late messages in their place.
    expect(await call<Message[]>(key, 'restore', { boundary: state.boundaries[0]!.id })).toEqual([
      ...history,
      ...late,
      ...pending,
    ]);
  });

  it('a worker killed (SIGKILL) in the middle of a summary call: the turn completes on the other worker, one summary committed, no message lost', async () => {
    const key = 'killed-mid-summary';
    const history = agentSteps(key, STEPS);
    await call(key, 'append', { messages: history });
    const arrived = deferred<number>();
    const release = hold();
    const before = summaryRequests();
    // Whichever worker sends the summary first is held there; a retry elsewhere is answered.
    fakes.forEach((f, i) =>
      f.script.push({ kind: 'hold', until: release.promise, onHeld: () => arrived.resolve(i) }),
    );
    const turn = call<ObjectTurnResult>(key, 'runTurn');
    const victim = await Promise.race([
      arrived.promise,
      turn.then((r) =>
        Promise.reject(new Error(`the turn ended without a summary call: ${JSON.stringify(r)}`)),
      ),
    ]);
    // While the summary call is held, the object's state shows the turn machine's snapshot.
    const held = await call<ObjectSessionState>(key, 'state');
    expect(held.turn?.turnId).toMatch(/^turn-/);
    // The last step Restate has received: the turn is still working (later steps of this
    // attempt reach it when the held call returns, over HTTP/1.1 one response per attempt).
    expect(held.turn!.value).toEqual({ working: expect.any(String) });
    expect(held.turn!.step).toBeGreaterThan(0);
    expect(held.boundaries).toEqual([]);
    // Each step keeps the turn's messages as indexes into the session's records, not a copy of them.
    const bytes = await server.stateBytes(OBJECT, key);
    expect(bytes.turn).toBeLessThan(bytes.records! / 10);
    await stopWorker(workers[victim]!, 'SIGKILL');
    release.resolve();
    const result = await turn;

    expect(result).toMatchObject({ decision: 'compacted', summaryCalls: 1 });
    const sent = summaryRequests().map((n, i) => n - before[i]!);
    expect(sent[victim]).toBe(1); // the request the dead worker never saw answered
    expect(sent[1 - victim]).toBe(1); // the retry's request, on the other worker
    const state = await call<ObjectSessionState>(key, 'state');
    expect(state.turn).toBeNull(); // the committed turn leaves no snapshot behind
    expect(state.boundaries).toHaveLength(1);
    expect(state.history.filter(isSummaryMessage)).toHaveLength(1);
    expect(state.messagesRecorded).toBe(history.length);
    // The full history before the compaction is kept and restorable.
    expect(await call<Message[]>(key, 'restore', { boundary: state.boundaries[0]!.id })).toEqual(history);
    // Written to the archive exactly once, though the turn ran on two workers and was replayed.
    expect(await server.invocations(ARCHIVE, 'put', `${key}/`)).toEqual({
      [`${key}/${state.boundaries[0]!.id}`]: 1,
    });
  });

  it('a session with 6 compactions behind it: its state is one round of working records, older events and histories are archived once and restorable', async () => {
    const key = 'long-session';
    const ROUNDS = 6;
    const boundaries = await growLongSession(call, key, ROUNDS, STEPS);
    const state = await call<ObjectSessionState>(key, 'state');
    expect(state.boundaries.map((b) => b.id)).toEqual(boundaries);
    expect(state.messagesRecorded).toBe(ROUNDS * 4 * STEPS);
    // What Restate hands the object with every step of a turn: the working records alone …
    const bytes = await server.stateBytes(OBJECT, key);
    expect(Object.keys(bytes)).toEqual(['records']);
    const archived = await Promise.all(
      boundaries.map(async (b) => (await server.stateBytes(ARCHIVE, `${key}/${b}`)).history ?? 0),
    );
    // … each archived history is a whole round (30 steps of 2,000 characters and more) …
    for (const size of archived) expect(size).toBeGreaterThan(60_000);
    // … and the records are smaller than any one of them: the last boundary and what followed.
    expect(bytes.records!).toBeLessThan(Math.min(...archived));
    expect(await server.invocations(ARCHIVE, 'put', `${key}/`)).toEqual(
      Object.fromEntries(boundaries.map((b) => [`${key}/${b}`, 1])),
    );
    // The events before each boundary went to a chunk of their own, written once.
    const chunks = await server.invocations(ARCHIVE, 'putEvents', `${key}/`);
    expect(Object.keys(chunks)).toHaveLength(ROUNDS);
    expect(Object.values(chunks)).toEqual(Array(ROUNDS).fill(1));
    // The first boundary gives back the first round; the last one the round before it ended.
    expect(await call<Message[]>(key, 'restore', { boundary: boundaries[0]! })).toEqual(
      agentSteps(`${key}-r0`, STEPS),
    );
    const last = await call<Message[]>(key, 'restore', { boundary: boundaries[ROUNDS - 1]! });
    expect(last.filter(isSummaryMessage)).toHaveLength(1);
    expect(last.slice(-4 * STEPS)).toEqual(agentSteps(`${key}-r${ROUNDS - 1}`, STEPS));
    await expect(call(key, 'restore', { boundary: 'compact-000001' })).rejects.toThrow(/404 /);
    // restateStore loads the working records and continues the numbering after the archived events.
    const store = await restateStore({ ingress: server.ingress, key });
    const s = createCompactorSession({ store });
    expect(s.history).toEqual(state.history);
    s.append(msg.user('one more'));
    await store.save();
    const after = await call<ObjectSessionState>(key, 'state');
    expect(after.messagesRecorded).toBe(ROUNDS * 4 * STEPS + 1);
    expect(after.history.at(-1)).toEqual(msg.user('one more'));
  });

  it('a session kept in the layout before the archive (every event and history in its own state) loads, and its next compaction moves the older events out', async () => {
    const key = 'old-layout';
    // Two compactions run in this process on the records as that layout kept them (short
    // steps: the admin API takes the state as an array of byte values).
    const local = memoryStore();
    const s = createCompactorSession({
      store: local,
      history: agentSteps(key, STEPS, 300),
      limits: { capacity: CAPACITY },
    });
    expect((await s.compact()).status).toBe('compacted');
    s.append(...agentSteps(`${key}-2`, STEPS, 300));
    expect((await s.compact()).status).toBe('compacted');
    const { artifacts, ...records } = local.records();
    const old = Object.keys(artifacts);
    expect(old).toHaveLength(2);
    await server.setState(OBJECT, key, {
      records,
      ...Object.fromEntries(Object.entries(artifacts).map(([b, h]) => [`artifact:${b}`, h])),
    });
    const before = await call<ObjectSessionState>(key, 'state');
    expect(before.history).toEqual(s.history);
    expect(before.boundaries.map((b) => b.id)).toEqual(old);
    expect(before.messagesRecorded).toBe(8 * STEPS);
    const bytesBefore = (await server.stateBytes(OBJECT, key)).records!;
    // A round on the object compacts a third time; the events before it leave the state.
    await call(key, 'append', { messages: agentSteps(`${key}-3`, STEPS) });
    const turn = await call<ObjectTurnResult>(key, 'runTurn');
    expect(turn.decision).toBe('compacted');
    const after = await call<ObjectSessionState>(key, 'state');
    expect(after.boundaries.map((b) => b.id)).toEqual([...old, turn.boundary!.id]);
    expect(after.messagesRecorded).toBe(12 * STEPS);
    expect((await server.stateBytes(OBJECT, key)).records!).toBeLessThan(bytesBefore);
    for (const b of old) expect(await call<Message[]>(key, 'restore', { boundary: b })).toEqual(artifacts[b]);
    expect(await call<Message[]>(key, 'restore', { boundary: turn.boundary!.id })).toHaveLength(
      turn.items.before,
    );
  });

  it('L6/S4: a failed summary call is recorded too: the retried run takes the same failure path without sending it again', async () => {
    const key = 'summary-refused';
    await call(key, 'append', { messages: agentSteps(key, STEPS) });
    const before = summaryRequests();
    for (const f of fakes)
      f.script.push({ kind: 'status', status: 400, body: { error: { message: 'bad request' } } });
    const turn = await call<ObjectTurnResult>(key, 'runTurn');
    const sent = summaryRequests().map((n, i) => n - before[i]!);
    expect(sent.reduce((a, b) => a + b)).toBe(1);
    expect(turn.boundary).toBeNull();
    const state = await call<ObjectSessionState>(key, 'state');
    expect(state.boundaries).toEqual([]);
    expect(state.messagesRecorded).toBe(4 * STEPS);
    for (const f of fakes) f.script.length = 0; // the other worker's fault was never used
  });

  it('R1/R2: restateStore keeps a session run in this process in the object; a second writer is refused, the object continues the session', async () => {
    const key = 'store-client';
    const history = agentSteps(key, STEPS);
    const [mine, other] = await Promise.all([0, 1].map(() => restateStore({ ingress: server.ingress, key })));
    const s = createCompactorSession({ store: mine, history, limits: { capacity: CAPACITY } });
    expect((await s.compact()).status).toBe('compacted');
    await mine.save();
    const state = await call<ObjectSessionState>(key, 'state');
    expect(state.history).toEqual(s.history);
    expect(await call<Message[]>(key, 'restore', { boundary: state.boundaries[0]!.id })).toEqual(history);
    // Loaded before the first writer saved: its records would overwrite the compaction.
    createCompactorSession({ store: other, history: [msg.user('another writer')] });
    await expect(other.save()).rejects.toThrow(/: 409 .*another writer holds it$/);
    const turn = await call<ObjectTurnResult>(key, 'runTurn', { pending: agentSteps(key, 1, 200, STEPS) });
    expect(turn.historyLength).toBe(s.history.length + 4);
    const reloaded = createCompactorSession({ store: await restateStore({ ingress: server.ingress, key }) });
    expect(reloaded.history).toEqual((await call<ObjectSessionState>(key, 'state')).history);
    await expect(restateStore({ ingress: 'not a url', key })).rejects.toThrow(
      /^restateStore: options\.ingress: /,
    );
  });

  it('a restart of the Restate server loses nothing committed, and sessions go on after it', async () => {
    const keys = [
      'concurrent-0',
      'concurrent-9',
      'one-writer',
      'killed-mid-summary',
      'store-client',
      'long-session',
    ];
    const before = await Promise.all(keys.map((k) => call<ObjectSessionState>(k, 'state')));
    const lastBoundary = before[5]!.boundaries.at(-1)!.id;
    const archived = await call<Message[]>('long-session', 'restore', { boundary: lastBoundary });
    expect(archived.length).toBeGreaterThan(4 * STEPS);
    await server.restart();
    const after = await Promise.all(keys.map((k) => call<ObjectSessionState>(k, 'state')));
    expect(after).toEqual(before);
    const boundaries: BoundaryInfo[] = after[0]!.boundaries;
    expect(await call<Message[]>(keys[0]!, 'restore', { boundary: boundaries[0]!.id })).toHaveLength(
      4 * STEPS,
    );
    // The archived histories are kept too.
    expect(await call<Message[]>('long-session', 'restore', { boundary: lastBoundary })).toEqual(archived);
    const turn = await call<ObjectTurnResult>(keys[0]!, 'runTurn', {
      pending: agentSteps(keys[0]!, 1, 200, 99),
    });
    expect(turn.historyLength).toBe(before[0]!.history.length + 4);
  });

  it('bad input is refused for good with a one-line error naming the handler and field', async () => {
    await expect(call('bad', 'append', { messages: [{ role: 'robot', content: 'x' }] })).rejects.toThrow(
      /400 .*compactorSession\/append: input\.messages\.0\.role: /,
    );
    await expect(call('bad', 'runTurn', { pending: 'x' })).rejects.toThrow(/400 .*runTurn: input\.pending: /);
    await expect(call('bad', 'restore', { boundary: 'compact-000001' })).rejects.toThrow(
      /404 .*no compaction boundary/,
    );
    // A request no window can hold fails the call for good instead of being retried forever.
    await expect(call('bad', 'runTurn', { pending: [msg.user('word '.repeat(60_000))] })).rejects.toThrow(
      /400 .*cannot hold even the fixed part of a request/,
    );
    const state = await call<ObjectSessionState>('bad', 'state');
    expect(state).toMatchObject({ messagesRecorded: 0, turn: null });
  });
});
