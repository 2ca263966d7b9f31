import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import OpenAI from 'openai';
import { freeEncoders } from '#src/estimate/index.js';
import { conversationName } from '#src/restate/conversation-object.js';
import { OBJECT_NAME } from '#src/restate/session-object.js';
import { startServer, type RunningServer } from '#src/serve/index.js';
import { startFakeAgentUpstream, type FakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import type { Fault } from '#dev/fakes/fake-http.js';
import { RestateServer, startWorker, stopWorker, type Worker } from '#dev/restate/harness.js';
import { OPENING, stepRequest, type Chat } from '#support/serve/growing-chat.js';
import { COMPACTING_POLICY } from '#support/serve/proxy.js';
import { AGENT_ROUTES } from '#support/serve/restate-agent.js';
import { RESTATE_TEST_MS, restateSuite } from '#support/time-limits.js';

/**
 * On the Restate engine too, a request whose upstream answer is not a success leaves its
 * session exactly as it was: the proxy (in this process) has the turn held on the session
 * object and keeps it only once the upstream accepted the request. The sessions endpoint shows
 * what it showed before, the next, different request continues the session on its branch, and
 * no object's state holds the failed turn's messages after it. A failed compacting request's
 * retry reuses the summary the worker wrote (one summary call), and a failed edit of the
 * conversation leaves no new branch. A request that succeeded needs no call to say so: its
 * turn is written when it is worked out.
 */

const { install, describeWithRestate } = restateSuite();
jest.setTimeout(RESTATE_TEST_MS);

const WINDOW = 16_000;
const FAILED_TEXT = 'FAILED-TURN: this question never got an answer.';
const SUMMARY_PROMPT = 'You are writing a checkpoint of an agent session';

afterAll(() => freeEncoders());

describeWithRestate(
  'compactor serve --engine restate: a request that fails upstream leaves its session as it was',
  () => {
    let restate: RestateServer;
    let worker: Worker;
    let upstream: FakeAgentUpstream;
    let proxy: RunningServer;
    /** The next agent request (not a summary) holding `marker` gets `fault`, once. */
    let next: { marker: string; fault: Fault } | undefined;

    beforeAll(async () => {
      upstream = await startFakeAgentUpstream({
        window: WINDOW,
        faultFor: (req) => {
          if (next === undefined || !req.raw.includes(next.marker) || req.raw.includes(SUMMARY_PROMPT))
            return undefined;
          const { fault } = next;
          next = undefined;
          return fault;
        },
      });
      restate = new RestateServer(install!);
      await restate.start();
      // The worker writes the summaries on the agent's own model and wire, at the same fake.
      const route = { ...AGENT_ROUTES['openai-chat'], baseUrl: upstream.url, apiKeyEnv: 'FAKE_KEY' };
      worker = await startWorker(install!, {
        WORKER_ROUTE: JSON.stringify(route),
        WORKER_CAPACITY: String(WINDOW),
        FAKE_KEY: 'sk-worker-failed-turn',
      });
      await restate.register(`http://127.0.0.1:${worker.port}`);
      proxy = await startServer({
        port: 0,
        capacity: WINDOW,
        engine: 'restate',
        restateIngress: restate.ingress,
        openaiUpstream: upstream.url,
        http: { retries: 0, timeoutMs: 5_000 },
        session: { policy: COMPACTING_POLICY },
      });
    });

    afterAll(async () => {
      await proxy?.close();
      if (worker) await stopWorker(worker);
      await restate?.dispose();
      await upstream?.close();
    });

    const client = (session: string) =>
      new OpenAI({
        apiKey: 'sk-client-failed-turn',
        baseURL: `${proxy.url}/v1`,
        maxRetries: 0,
        defaultHeaders: { 'x-compactor-session': session },
      });
    const ask = (session: string, messages: Chat[]) =>
      client(session).chat.completions.create({ model: 'gpt-4o', messages }).withResponse();
    /** The opening asked and answered: the conversation with the model's answer after it. */
    const opened = async (session: string): Promise<Chat[]> => {
      const first = await ask(session, OPENING);
      return [...OPENING, { role: 'assistant', content: first.data.choices[0]!.message.content }];
    };
    const failure = (session: string, messages: Chat[], fault: Fault, marker: string) => {
      next = { marker, fault };
      return ask(session, messages).then(
        () => undefined,
        (e: unknown) => e,
      );
    };
    const shown = async (session: string) => {
      const res = await fetch(`${proxy.url}/compactor/sessions/${session}`);
      expect(res.status).toBe(200);
      // The last request is this proxy's own note of its last answered one.
      return (await res.json()) as Record<string, unknown>;
    };
    /** Every state value of the session's objects (conversation, branches, archive) as text. */
    const objectState = async (session: string) => {
      const rows = await restate.query<{ service_key: string; key: string; value_utf8: string }>(
        `SELECT service_key, key, value_utf8 FROM state WHERE service_key LIKE '${session}%'`,
      );
      return rows;
    };
    const branchesOf = async (session: string) =>
      (await restate.call<{ branch: number } | null>(conversationName(OBJECT_NAME), session, 'state'))
        ?.branch;

    it('a request the upstream answered sends no verdict: the sessions endpoint and the session object show its turn at once', async () => {
      const session = 'answered-no-verdict';
      const nextRequest: Chat[] = [
        ...(await opened(session)),
        { role: 'user', content: 'Now read the CHANGELOG.' },
      ];
      await ask(session, nextRequest);
      // The system prompt is not a message of the session.
      expect((await shown(session)).messages).toBe(nextRequest.length - 1);
      const events = await restate.sessionEvents(session);
      expect(events.filter((e) => e.type === 'message.appended')).toHaveLength(nextRequest.length - 1);
      const settles = await restate.invocations(conversationName(OBJECT_NAME), 'settle', session);
      expect(settles[session] ?? 0).toBe(0);
    });

    it('a request that fails upstream and is sent again as it was keeps its turn once', async () => {
      const session = 'failed-then-sent-again';
      const request: Chat[] = [
        ...(await opened(session)),
        { role: 'user', content: 'SENT-AGAIN: read the LICENSE.' },
      ];
      const error = await failure(session, request, { kind: 'status', status: 500 }, 'SENT-AGAIN');
      expect(error).toBeInstanceOf(OpenAI.APIError);
      await ask(session, request);
      expect((await shown(session)).messages).toBe(request.length - 1);
      const events = await restate.sessionEvents(session);
      const again = events.filter(
        (e) => e.type === 'message.appended' && JSON.stringify(e.message).includes('SENT-AGAIN'),
      );
      expect(again).toHaveLength(1);
    });

    it('a failed request puts every value of its session object back: records, snapshots, notes, the last request sent', async () => {
      const session = 'failed-put-back';
      const answered = await opened(session);
      const second = await ask(session, [...answered, { role: 'user', content: 'Now read the CHANGELOG.' }]);
      const request: Chat[] = [
        ...answered,
        { role: 'user', content: 'Now read the CHANGELOG.' },
        { role: 'assistant', content: second.data.choices[0]!.message.content },
        { role: 'user', content: `${FAILED_TEXT} Read the LICENSE.` },
      ];
      // What a turn keeps for the next one, and the provider's usage (it arrives on its own time).
      const own = ['held', 'heldUndo', 'keptTurn', 'usage'];
      const values = async () =>
        (
          await restate.query<{ key: string; value_utf8: string }>(
            `SELECT key, value_utf8 FROM state WHERE service_name = '${OBJECT_NAME}' AND service_key = '${session}'`,
          )
        )
          .filter((r) => !own.includes(r.key))
          .sort((a, b) => a.key.localeCompare(b.key))
          .map((r) => [r.key, JSON.parse(r.value_utf8) as unknown]);
      const before = await values();
      expect(before.map(([key]) => key)).toEqual(expect.arrayContaining(['records', 'lastSent']));
      const error = await failure(session, request, { kind: 'status', status: 500 }, FAILED_TEXT);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      await shown(session);
      expect(await values()).toEqual(before);
    });

    const FAULTS: Array<[string, Fault]> = [
      [
        '500',
        { kind: 'status', status: 500, body: { error: { message: 'upstream broke', type: 'server_error' } } },
      ],
      ['a reset connection', { kind: 'reset' }],
    ];

    it.each(FAULTS)(
      '%s: nothing of the failed turn is kept; the next, different request continues the session on one branch',
      async (what, fault) => {
        const session = `failed-${what.replace(/\W+/g, '-')}`;
        const first = await ask(session, OPENING);
        const answered: Chat[] = [
          ...OPENING,
          { role: 'assistant', content: first.data.choices[0]!.message.content },
        ];
        const before = await shown(session);

        const error = await failure(
          session,
          [...answered, { role: 'user', content: FAILED_TEXT }],
          fault,
          FAILED_TEXT,
        );
        expect(error).toBeInstanceOf(OpenAI.APIError);
        expect(await shown(session)).toEqual(before);

        const nextRequest: Chat[] = [...answered, { role: 'user', content: 'Now read the CHANGELOG.' }];
        const again = await ask(session, nextRequest);
        expect(again.data.choices[0]!.message.content).toBeTruthy();
        const after = await shown(session);
        expect(after.branches).toBe(1);
        expect(after.messages).toBe(nextRequest.length - 1); // the system prompt is not a message of the session
        expect(await branchesOf(session)).toBe(0);
        const states = await objectState(session);
        expect(states.length).toBeGreaterThan(0);
        expect(
          states.filter((s) => s.value_utf8.includes('FAILED-TURN')).map((s) => [s.service_key, s.key]),
        ).toEqual([]);
        expect(states.filter((s) => s.service_key.includes('.fork-'))).toEqual([]);
      },
    );

    it('a compacting request fails upstream; its retry compacts with the same summary: one summary call in all', async () => {
      const probe = 'failed-compacting-probe';
      let compacting = -1;
      for (let n = 0; n < 20 && compacting < 0; n++) {
        const res = await ask(probe, stepRequest(n));
        if (res.response.headers.get('x-compactor-compacted') === 'true') compacting = n;
      }
      expect(compacting).toBeGreaterThan(1);

      const session = 'failed-compacting';
      for (let n = 0; n < compacting; n++) await ask(session, stepRequest(n));
      const before = await shown(session);
      const summaries = upstream.summaries.length;
      const turn = stepRequest(compacting);
      const fault: Fault = { kind: 'status', status: 500 };
      const error = await failure(session, turn, fault, `STEP-${compacting}-ASKED`);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      // The failed request compacted (the worker paid for one summary); its session is as it was.
      expect(upstream.summaries.length).toBe(summaries + 1);
      expect(await shown(session)).toEqual(before);

      const retried = await ask(session, turn);
      expect(retried.response.headers.get('x-compactor-compacted')).toBe('true');
      expect(upstream.summaries.length).toBe(summaries + 1);
      const after = await shown(session);
      expect(after.branches).toBe(1);
      expect(after.summariesMade).toBe(1);
      expect(after.messages).toBeLessThan(turn.length - 1);
    });

    it('an edit of the conversation whose request fails leaves no new branch; the next request continues the old one', async () => {
      const session = 'failed-fork';
      const first = await ask(session, OPENING);
      const answered: Chat[] = [
        ...OPENING,
        { role: 'assistant', content: first.data.choices[0]!.message.content },
        { role: 'user', content: 'Now read the CHANGELOG.' },
      ];
      const second = await ask(session, answered);
      const before = await shown(session);
      expect(before.branches).toBe(1);

      // The client rewrote its first question: a new branch, had the request succeeded.
      const edited: Chat[] = [OPENING[0]!, { role: 'user', content: `${FAILED_TEXT} Read the LICENSE.` }];
      const error = await failure(session, edited, { kind: 'status', status: 500 }, FAILED_TEXT);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(await shown(session)).toEqual(before);
      expect(await branchesOf(session)).toBe(0);

      const nextRequest: Chat[] = [
        ...answered,
        { role: 'assistant', content: second.data.choices[0]!.message.content },
        { role: 'user', content: 'Thanks.' },
      ];
      await ask(session, nextRequest);
      const after = await shown(session);
      expect(after.branches).toBe(1);
      expect(after.messages).toBe(nextRequest.length - 1);
      const states = await objectState(session);
      expect(states.filter((s) => s.service_key.includes('.fork-'))).toEqual([]);
      expect(states.filter((s) => s.value_utf8.includes('FAILED-TURN'))).toEqual([]);
    });
  },
);
