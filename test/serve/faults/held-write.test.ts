import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/index.js';
import { EVENTS_FILE } from '#src/store/artifacts.js';
import {
  cleanUp,
  fakeUpstream,
  holdNext,
  post,
  startServe,
  storedMessages,
  tempDir,
  type Serve,
} from './harness.js';

/**
 * With `--data-dir` a request's new messages wait in memory while the request is upstream; its
 * 2xx writes them with the commit line that makes them part of the session before the answer
 * goes on, and a failure drops them. So a process killed while the request is upstream leaves
 * the session as it was, one killed right after an answer keeps the turn (also a session's
 * first), and a failed request leaves the log's bytes as they were.
 */

afterAll(() => freeEncoders());
afterEach(cleanUp);

type Chat = Array<{ role: string; content: string }>;
const SESSION = 'held-write';
const OPENING: Chat = [
  { role: 'system', content: 'You review code.' },
  { role: 'user', content: 'FIRST-QUESTION: read the README.' },
];

async function ask(serve: Serve, messages: Chat) {
  const res = await post(
    serve.url,
    '/v1/chat/completions',
    { model: 'gpt-4o', max_tokens: 256, messages },
    { headers: { 'x-compactor-session': SESSION } },
  );
  return { status: res.status, body: (await res.json()) as any };
}

/** The conversation after `messages` got an answer. */
async function answered(serve: Serve, messages: Chat): Promise<Chat> {
  const { status, body } = await ask(serve, messages);
  expect(status).toBe(200);
  return [...messages, { role: 'assistant', content: String(body.choices[0].message.content) }];
}

async function sessionState(serve: Serve): Promise<Record<string, unknown>> {
  return (await (await fetch(`${serve.url}/compactor/sessions/${SESSION}`)).json()) as Record<
    string,
    unknown
  >;
}

async function kill(serve: Serve): Promise<void> {
  serve.cli.child.kill('SIGKILL');
  await serve.cli.done.catch(() => undefined);
}

const stored = (dataDir: string) => storedMessages(dataDir).get(SESSION) ?? [];
const logOf = (dataDir: string) => join(dataDir, SESSION, EVENTS_FILE);
const logText = (dataDir: string) => (existsSync(logOf(dataDir)) ? readFileSync(logOf(dataDir), 'utf8') : '');

/** A proxy with its data in a new directory, in front of a new fake model. */
async function setUp() {
  const upstream = await fakeUpstream();
  const cwd = tempDir();
  const serve = await startServe(upstream.url, cwd);
  return { upstream, cwd, dataDir: join(cwd, 'sessions'), serve };
}

/** The next request continues the session on one branch, holding every message once. */
async function continues(serve: Serve, conversation: Chat): Promise<void> {
  const next = await answered(serve, [
    ...conversation,
    { role: 'user', content: 'NEXT: and the CHANGELOG?' },
  ]);
  const state = await sessionState(serve);
  expect(state.branches).toBe(1);
  expect(state.messages).toBe(next.length - 2); // without the system prompt and the answer
}

describe('R1/R2: compactor serve --data-dir: a held turn is written with its commit line on its 2xx', () => {
  it('R2: a process killed while a request is upstream leaves the session as it was; its messages were not written', async () => {
    const { upstream, cwd, dataDir, serve } = await setUp();
    const conversation = await answered(serve, OPENING);
    const before = stored(dataDir);
    expect(before).toHaveLength(1);

    const hold = holdNext(upstream);
    const asked = [...conversation, { role: 'user', content: 'KILLED-TURN: now the tests.' }];
    const answer = ask(serve, asked).catch(() => undefined);
    await hold.held;
    // The new messages wait for the upstream's status before they are written.
    expect(logText(dataDir)).not.toContain('KILLED-TURN');
    expect(stored(dataDir)).toEqual(before);
    await kill(serve);
    await answer;

    const fresh = await startServe(upstream.url, cwd);
    expect(stored(dataDir)).toEqual(before);
    await continues(fresh, conversation);
    expect(JSON.stringify(stored(dataDir))).not.toContain('KILLED-TURN');
  });

  it("R2: a process killed right after a session's first answer keeps that turn; the restarted proxy continues it", async () => {
    const { upstream, cwd, dataDir, serve } = await setUp();
    const conversation = await answered(serve, OPENING);
    await kill(serve);
    expect(JSON.stringify(stored(dataDir))).toContain('FIRST-QUESTION');

    const fresh = await startServe(upstream.url, cwd);
    await continues(fresh, conversation);
  });

  it('R2: a process killed right after a later answer keeps that turn', async () => {
    const { upstream, cwd, dataDir, serve } = await setUp();
    const first = await answered(serve, OPENING);
    const second = await answered(serve, [...first, { role: 'user', content: 'KEPT-TURN: now the tests.' }]);
    await kill(serve);
    expect(stored(dataDir)).toHaveLength(3);
    expect(JSON.stringify(stored(dataDir))).toContain('KEPT-TURN');

    const fresh = await startServe(upstream.url, cwd);
    await continues(fresh, second);
  });

  it("R2: a process killed while a session's first request is upstream leaves a directory the restarted proxy takes as a new session", async () => {
    const { upstream, cwd, dataDir, serve } = await setUp();
    const hold = holdNext(upstream);
    const answer = ask(serve, OPENING).catch(() => undefined);
    await hold.held;
    expect(logText(dataDir)).toBe('');
    await kill(serve);
    await answer;

    const fresh = await startServe(upstream.url, cwd);
    expect(stored(dataDir)).toEqual([]);
    await continues(fresh, await answered(fresh, OPENING));
  });

  it('R2: a failed request leaves the log at its committed length, a failed first request too', async () => {
    const { upstream, cwd, dataDir, serve } = await setUp();
    const refused = { kind: 'status' as const, status: 500, body: { error: { message: 'upstream broke' } } };

    upstream.script.push(refused);
    expect((await ask(serve, OPENING)).status).toBe(500);
    expect(logText(dataDir)).toBe('');

    const conversation = await answered(serve, OPENING);
    const size = statSync(logOf(dataDir)).size;
    const text = logText(dataDir);
    upstream.script.push(refused);
    const failed = [...conversation, { role: 'user', content: 'FAILED-TURN: now the tests.' }];
    expect((await ask(serve, failed)).status).toBe(500);
    // The cut back is on disk before the client hears of the failure.
    expect(statSync(logOf(dataDir)).size).toBe(size);
    expect(logText(dataDir)).toBe(text);

    await kill(serve);
    const fresh = await startServe(upstream.url, cwd);
    await continues(fresh, conversation);
    expect(logText(dataDir)).not.toContain('FAILED-TURN');
  });
});
