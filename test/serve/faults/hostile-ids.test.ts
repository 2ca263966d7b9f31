import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { readdirSync } from 'node:fs';
import { startServer, type RunningServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { dirName } from '#src/adapters/shared/sync-point.js';
import { cleanUp, fakeUpstream, KEY, storedMessages, tempDir, WINDOW } from './harness.js';

/**
 * A session id is a name and nothing else: no id reaches another session's branch, sync file
 * or hashed directory, and an id the proxy could not echo in its answer's header is refused
 * (400, the protocol's error shape) before anything goes upstream or to disk.
 */

afterAll(() => freeEncoders());
const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await cleanUp();
});

async function setup(dataDir = tempDir()) {
  const upstream = await fakeUpstream();
  const start = () =>
    startServer({
      port: 0,
      capacity: WINDOW,
      anthropicUpstream: upstream.url,
      openaiUpstream: upstream.url,
      dataDir,
      http: { retries: 0 },
    }).then((s) => (servers.push(s), s));
  return { upstream, dataDir, server: await start(), start };
}

/** Posts with raw header bytes (what an agent sending UTF-8 in a header puts on the wire). */
function rawPost(url: string, path: string, body: unknown, headers: Record<string, string>) {
  const text = JSON.stringify(body);
  return new Promise<{ status: number; body: any; headers: Record<string, unknown> }>((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
          authorization: `Bearer ${KEY}`,
          'x-api-key': KEY,
          ...Object.fromEntries(
            Object.entries(headers).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('latin1')]),
          ),
        },
      },
      (res) => {
        let raw = '';
        res.on('data', (c: Buffer) => (raw += c.toString('utf8')));
        res.on('end', () => {
          let parsed: unknown = raw;
          try {
            parsed = JSON.parse(raw);
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const chat = (messages: unknown[]) => ({ model: 'gpt-4o', max_tokens: 256, messages });
const anthropic = (extra: Record<string, unknown> = {}) => ({
  model: 'claude-sonnet-4-6',
  max_tokens: 256,
  messages: [{ role: 'user', content: 'Review the diff.' }],
  ...extra,
});

describe('compactor serve: ids the proxy cannot echo are refused before anything is sent', () => {
  const HOSTILE: Array<[string, string]> = [
    ['emoji', 'session-🦀'],
    ['CJK', '会话-一'],
    ['a tab (a control character)', 'a\tb'],
    ['300 bytes', 'x'.repeat(300)],
  ];
  it.each(HOSTILE)(
    'x-compactor-session with %s: 400 in each protocol shape, nothing upstream, nothing stored',
    async (_, id) => {
      const { upstream, server, dataDir } = await setup();
      const chatAnswer = await rawPost(
        server.url,
        '/v1/chat/completions',
        chat([{ role: 'user', content: 'hi' }]),
        {
          'x-compactor-session': id,
        },
      );
      expect(chatAnswer.status).toBe(400);
      expect(chatAnswer.body.error.message).toMatch(
        /^compactor: x-compactor-session: a session id is 1 to 256 printable ASCII/,
      );
      const anthropicAnswer = await rawPost(server.url, '/v1/messages', anthropic(), {
        'x-compactor-session': id,
      });
      expect(anthropicAnswer.status).toBe(400);
      expect(anthropicAnswer.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(upstream.requests).toHaveLength(0);
      // Only the server's own lock on its data directory: no session was stored.
      expect(readdirSync(dataDir)).toEqual(['@serve.lock']);
    },
  );

  it('a header too large for any server is refused by the HTTP layer (431), not echoed', async () => {
    const { upstream, server } = await setup();
    const answer = await rawPost(server.url, '/v1/messages', anthropic(), {
      'x-compactor-session': 'y'.repeat(100_000),
    });
    expect(answer.status).toBe(431);
    expect(upstream.requests).toHaveLength(0);
  });

  it.each([...HOSTILE, ['10 KB', 'z'.repeat(10_000)] as [string, string]])(
    'an unusable id in the body (metadata.user_id with %s) is ignored: the history finds the session',
    async (_, id) => {
      const { upstream, server } = await setup();
      const first = await rawPost(server.url, '/v1/messages', anthropic({ metadata: { user_id: id } }), {});
      expect(first.status).toBe(200);
      const session = first.headers['x-compactor-session'] as string;
      expect(session).toMatch(/^c-[0-9a-f]{16}$/);
      const next = anthropic({
        metadata: { user_id: id },
        messages: [
          { role: 'user', content: 'Review the diff.' },
          { role: 'assistant', content: 'It renames one function.' },
          { role: 'user', content: 'Any risk?' },
        ],
      });
      const second = await rawPost(server.url, '/v1/messages', next, {});
      expect(second.headers['x-compactor-session']).toBe(session);
      expect(upstream.requests).toHaveLength(2);
    },
  );
});

describe('R1: compactor serve: a session belongs to whoever opened it (its stored records are never rewritten by another)', () => {
  /** Opens "victim" with two branches (its list was rewritten once) and returns what each stored. */
  async function victim(url: string) {
    const send = (messages: unknown[]) =>
      rawPost(url, '/v1/chat/completions', chat(messages), { 'x-compactor-session': 'victim' });
    const u1 = { role: 'user', content: 'VICTIM secret plan: migrate the billing database.' };
    const a1 = { role: 'assistant', content: 'Understood.' };
    expect((await send([u1])).status).toBe(200);
    expect((await send([u1, a1, { role: 'user', content: 'VICTIM step two.' }])).status).toBe(200);
    expect((await send([u1, a1, { role: 'user', content: 'VICTIM step two, edited.' }])).status).toBe(200);
  }

  it('naming a branch, a sync file or a hashed name opens a session of its own; the owner is untouched, also after a restart', async () => {
    const { upstream, server, dataDir, start } = await setup();
    await victim(server.url);
    const hashedOwner = 'L'.repeat(200);
    expect(
      (
        await rawPost(
          server.url,
          '/v1/chat/completions',
          chat([{ role: 'user', content: 'VICTIM long id.' }]),
          {
            'x-compactor-session': hashedOwner,
          },
        )
      ).status,
    ).toBe(200);
    const before = storedMessages(dataDir);
    expect([...before.keys()].sort()).toEqual(['victim', 'victim.fork-1', dirName(hashedOwner)].sort());
    const attackers = [
      'victim.fork-1',
      'victim.sync.json',
      'victim.fork-2',
      dirName(hashedOwner),
      `h-${'0'.repeat(24)}`,
    ];
    for (const id of attackers) {
      const sentBefore = upstream.requests.length;
      const answer = await rawPost(
        server.url,
        '/v1/chat/completions',
        chat([{ role: 'user', content: `ATTACKER as ${id}` }]),
        { 'x-compactor-session': id },
      );
      expect(answer.status).toBe(200);
      expect(answer.headers['x-compactor-session']).toBe(id);
      // What went upstream holds the attacker's message only, nothing of another session.
      const sent = upstream.requests
        .slice(sentBefore)
        .map((r) => r.raw)
        .join('\n');
      expect(sent).not.toContain('VICTIM');
      const state = (await (
        await fetch(`${server.url}/compactor/sessions/${encodeURIComponent(id)}`)
      ).json()) as any;
      expect(state).toMatchObject({ id, messages: 1, branches: 1 });
    }
    // The owners' stores hold exactly what they held.
    const after = storedMessages(dataDir);
    for (const [name, messages] of before) expect(after.get(name)).toEqual(messages);
    // After a restart the owner continues its conversation where it was.
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const again = await start();
    const next = await rawPost(
      again.url,
      '/v1/chat/completions',
      chat([
        { role: 'user', content: 'VICTIM secret plan: migrate the billing database.' },
        { role: 'assistant', content: 'Understood.' },
        { role: 'user', content: 'VICTIM step two, edited.' },
        { role: 'assistant', content: 'Done.' },
        { role: 'user', content: 'VICTIM step three.' },
      ]),
      { 'x-compactor-session': 'victim' },
    );
    expect(next.status).toBe(200);
    const branch = storedMessages(dataDir).get('victim.fork-1')!;
    expect(branch.map((m: any) => m.content[0]?.text ?? m.content)).toEqual(
      expect.arrayContaining([expect.stringContaining('VICTIM step three.')]),
    );
    const sentLast = upstream.requests.at(-1)!.raw;
    expect(sentLast).not.toContain('ATTACKER');
  });

  it('the sessions endpoint answers a bad id or bad % with 400 and a stranger with 404, never 500', async () => {
    const { server } = await setup();
    await victim(server.url);
    const status = async (segment: string) =>
      (await fetch(`${server.url}/compactor/sessions/${segment}`)).status;
    expect(await status('%E0%A4%A')).toBe(400);
    expect(await status('%ZZ')).toBe(400);
    expect(await status('%F0%9F%A6%80')).toBe(400);
    expect(await status('a%09b')).toBe(400);
    expect(await status('nobody')).toBe(404);
    expect(await status('victim.fork-1')).toBe(404);
    expect(await status('victim')).toBe(200);
  });
});
