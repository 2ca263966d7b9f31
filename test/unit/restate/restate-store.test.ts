import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UserError } from '#src/core/errors.js';
import { freeEncoders } from '#src/estimate/index.js';
import { msg } from '#src/messages/message.js';
import { restateStore } from '#src/restate/index.js';
import { createCompactorSession } from '#src/session/index.js';
import { expectKeptCopy, protoKeyMessage } from '#support/proto-keys.js';

// restateStore is plain HTTP over the ingress: checked here against a stand-in ingress on
// 127.0.0.1 that answers as the object does (test/restate runs it against the real server).
afterAll(freeEncoders);

interface Seen {
  path: string;
  body: unknown;
}

describe('restateStore over the ingress (no Restate SDK needed)', () => {
  let server: Server;
  let ingress: string;
  const seen: Seen[] = [];
  let records: unknown = { events: [], artifacts: {}, snapshots: {} };
  let commitAnswer: { status: number; body: unknown } = { status: 200, body: { events: 0 } };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        seen.push({ path: req.url ?? '', body: raw ? (JSON.parse(raw) as unknown) : undefined });
        const answer = req.url!.endsWith('/records') ? { status: 200, body: records } : commitAnswer;
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ingress = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('R1: save sends the committed events since the load, and the count it started from', async () => {
    records = { events: [], artifacts: {}, snapshots: {} };
    const store = await restateStore({ ingress, key: 'a b' });
    const s = createCompactorSession({ store, history: [msg.user('one'), msg.user('two')] });
    await store.save();
    s.append(msg.user('three'));
    await store.save();
    const commits = seen.filter((x) => x.path.endsWith('/commitRecords'));
    expect(commits.map((c) => c.path)).toEqual([
      '/compactorSession/a%20b/commitRecords',
      '/compactorSession/a%20b/commitRecords',
    ]);
    expect(commits.map((c) => (c.body as { basedOn: number }).basedOn)).toEqual([0, 2]);
    expect((commits[1]!.body as { events: unknown[] }).events).toHaveLength(3);
  });

  it('R1: keys named __proto__ in a message come back from the records and go out in the save', async () => {
    const m = protoKeyMessage();
    // As the object answers: its records went through JSON, where such a key is an own key.
    records = JSON.parse(
      JSON.stringify({
        events: [{ type: 'message.appended', seq: 1, at: 'now', message: m }],
        artifacts: {},
        snapshots: {},
      }),
    );
    const store = await restateStore({ ingress, key: 'p' });
    const s = createCompactorSession({ store });
    expectKeptCopy(s.history[0], m);
    s.append(m);
    await store.save();
    const commit = seen.filter((x) => x.path === '/compactorSession/p/commitRecords').at(-1)!;
    const events = (commit.body as { events: Array<{ message: unknown }> }).events;
    expect(events.map((e) => JSON.stringify(e.message))).toEqual([JSON.stringify(m), JSON.stringify(m)]);
    records = { events: [], artifacts: {}, snapshots: {} };
  });

  it('R2: a refused save (another writer committed first) is a one-line UserError with the server message', async () => {
    const store = await restateStore({ ingress, key: 'b' });
    createCompactorSession({ store, history: [msg.user('mine')] });
    commitAnswer = {
      status: 409,
      body: { code: 409, message: 'compactorSession/b: the session changed since this writer loaded it' },
    };
    const refused = store.save();
    await expect(refused).rejects.toThrow(UserError);
    await expect(refused).rejects.toThrow(
      /^restateStore: http:\/\/127\.0\.0\.1:\d+\/compactorSession\/b\/commitRecords: 409 compactorSession\/b: the session changed since this writer loaded it$/,
    );
    commitAnswer = { status: 200, body: { events: 0 } };
  });

  it('D3: damaged records from the object are refused naming the field; bad options name the option', async () => {
    records = {
      events: [{ type: 'message.appended', seq: 1, at: 'now', message: { role: 'robot' } }],
      artifacts: {},
      snapshots: {},
    };
    await expect(restateStore({ ingress, key: 'c' })).rejects.toThrow(
      /^restateStore: http:\/\/127\.0\.0\.1:\d+\/compactorSession\/c\/records\.events\.0\./,
    );
    await expect(restateStore({ ingress, key: '' })).rejects.toThrow(/^restateStore: options\.key: /);
  });
});
