import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, brotliCompressSync, createGzip, deflateSync, gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { startFakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import { EVENTS_FILE } from '#src/store/artifacts.js';
import type { FakeServer } from '#support/fake-http.js';
import { runCompiledCli, startServeCli, stopRunningClis, type CliChild } from '#support/compiled-cli.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

// `compactor serve` as a process, probed as an operator and an attacker would: what it stores,
// who it listens to, and the bodies and paths a hostile client sends.
const WINDOW = 16_000;
const dirs: string[] = [];
const upstreams: FakeServer[] = [];
async function stopAll(): Promise<void> {
  await stopRunningClis();
  for (const u of upstreams.splice(0)) await u.close();
}
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'compactor-serve-safe-'));
  dirs.push(d);
  return d;
}

async function serve(
  cwd: string,
  extra: string[] = [],
): Promise<{ cli: CliChild; url: string; upstream: FakeServer }> {
  const upstream = await startFakeAgentUpstream({ window: WINDOW });
  upstreams.push(upstream);
  const { cli, url } = await startServeCli(
    [
      '--capacity',
      String(WINDOW),
      '--summarizer',
      'offline',
      '--openai-upstream',
      upstream.url,
      '--anthropic-upstream',
      upstream.url,
      ...extra,
    ],
    { cwd },
  );
  return { cli, url, upstream };
}

const chat = (text = 'Read the README and summarise it.') =>
  JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: text }] });
const anthropic = (text = 'Read the README and summarise it.') =>
  JSON.stringify({
    model: 'claude-sonnet-4-6',
    max_tokens: 256,
    messages: [{ role: 'user', content: text }],
  });

function post(url: string, path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer sk-x',
      'x-api-key': 'sk-x',
      ...headers,
    },
    body,
  });
}

/** Every entry under `dir` with its permission bits. */
function modesUnder(dir: string): Array<{ path: string; dir: boolean; mode: number }> {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => {
    const st = statSync(join(dir, f));
    return { path: f, dir: st.isDirectory(), mode: st.mode & 0o777 };
  });
}

describe('compactor serve: private and safe defaults', () => {
  afterEach(stopAll);

  it('R2: the data directory is created owner-only and every file in it is 0600; an open one is tightened with one line', async () => {
    const cwd = tempDir();
    const { cli, url } = await serve(cwd, ['--data-dir', 'sessions']);
    for (const text of ['first task', 'second task'])
      expect((await post(url, '/v1/chat/completions', chat(text))).status).toBe(200);
    cli.child.kill('SIGTERM');
    expect((await cli.done).code).toBe(0);
    const data = join(cwd, 'sessions');
    expect(statSync(data).mode & 0o777).toBe(0o700);
    const entries = modesUnder(data);
    // Each conversation's log is there (a first call writes no sync file: the log says where it stands).
    expect(entries.filter((e) => !e.dir && e.path.endsWith(EVENTS_FILE))).toHaveLength(2);
    for (const e of entries) expect([e.path, e.mode]).toEqual([e.path, e.dir ? 0o700 : 0o600]);

    const open = join(cwd, 'open');
    mkdirSync(open);
    chmodSync(open, 0o755);
    const again = await serve(cwd, ['--data-dir', 'open']);
    expect(again.cli.err()).toMatch(
      /^compactor: the data directory let other users in \(mode 755\); it is now readable by its owner only\n/,
    );
    expect(statSync(open).mode & 0o777).toBe(0o700);
  });

  it('D3: --host other than this machine without --auth-token-env is one line and exit 2; --allow-open serves', async () => {
    const cwd = tempDir();
    for (const host of ['0.0.0.0', '::']) {
      const r = await runCompiledCli(['serve', '--port', '0', '--host', host], { cwd });
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^compactor: serve: --host [^\n]+ give --auth-token-env NAME[^\n]*\n$/);
    }
    const open = await serve(cwd, ['--host', '0.0.0.0', '--allow-open']);
    expect(open.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    const local = open.url.replace('0.0.0.0', '127.0.0.1');
    expect((await post(local, '/v1/chat/completions', chat())).status).toBe(200);
  });

  it('R2: a second server on the same data directory is refused with one line naming no pid, host or path; a killed one does not block', async () => {
    const cwd = tempDir();
    const first = await serve(cwd, ['--data-dir', 'sessions']);
    const second = await runCompiledCli(['serve', '--port', '0', '--data-dir', 'sessions'], { cwd });
    expect(second.code).toBe(2);
    expect(second.err).toBe(
      'compactor: serve: the data directory is in use by another compactor serve; stop that one first or give another --data-dir\n',
    );
    for (const leak of [String(first.cli.child.pid), hostname(), cwd]) expect(second.err).not.toContain(leak);
    first.cli.child.kill('SIGKILL');
    await first.cli.done;
    // The lock of a killed server is taken over: the next one starts and serves.
    const third = await serve(cwd, ['--data-dir', 'sessions']);
    expect((await post(third.url, '/v1/chat/completions', chat())).status).toBe(200);
  });
});

// The hostile bodies and paths all go to one server: each must leave it serving the next.
describe('compactor serve: hostile bodies and paths, one server throughout', () => {
  let shared: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    shared = await serve(tempDir(), ['--max-body-bytes', String(1024 * 1024)]);
  });
  afterAll(stopAll);

  it('D3: gzip, deflate and br bodies are decoded and sent on plain; an unknown encoding is a 415', async () => {
    const { url, upstream } = shared;
    const encoders: Record<string, (b: Buffer) => Buffer> = {
      gzip: (b) => gzipSync(b),
      deflate: (b) => deflateSync(b),
      br: (b) => brotliCompressSync(b),
    };
    for (const [encoding, encode] of Object.entries(encoders)) {
      const text = `a task sent with ${encoding}`;
      const res = await post(url, '/v1/messages', encode(Buffer.from(anthropic(text))), {
        'content-encoding': encoding,
      });
      expect([encoding, res.status]).toEqual([encoding, 200]);
      const sent = upstream.requests.at(-1)!;
      expect(sent.headers['content-encoding']).toBeUndefined();
      expect(JSON.stringify(sent.body.messages)).toContain(text);
    }
    const res = await post(url, '/v1/messages', anthropic(), { 'content-encoding': 'zstd' });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({
      type: 'error',
      error: { message: expect.stringContaining('zstd') },
    });
  });

  it('D3: a zip bomb is refused with 413 in the protocol’s shape after the body limit, and the proxy keeps serving', async () => {
    const { cli, url } = shared;
    // 256 MiB of zeros, compressed as it is made: about 250 KB on the wire.
    const zeros = Readable.from(
      (function* () {
        for (let i = 0; i < 256; i++) yield Buffer.alloc(1024 * 1024);
      })(),
    );
    const bomb = await buffer(zeros.pipe(createGzip({ level: constants.Z_BEST_COMPRESSION })));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    for (const path of ['/v1/messages', '/v1/chat/completions']) {
      const res = await post(url, path, bomb, { 'content-encoding': 'gzip' });
      expect(res.status).toBe(413);
      const body = (await res.json()) as any;
      if (path === '/v1/messages')
        expect(body).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
      else expect(body.error.message).toMatch(/larger than 1048576 bytes/);
    }
    expect((await post(url, '/v1/chat/completions', chat())).status).toBe(200);
    expect(cli.child.exitCode).toBeNull();
  });

  it('D3: 100,000-deep JSON, a malformed % in a sessions path and a path that is no URL get a 4xx, never a 500 or a crash', async () => {
    const { cli, url } = shared;
    const deep = `{"model":"gpt-4o","messages":[{"role":"user","content":${'['.repeat(100_000)}${']'.repeat(100_000)}}]}`;
    for (const path of ['/v1/chat/completions', '/v1/messages', '/v1/responses']) {
      const res = await post(url, path, deep);
      expect([path, res.status]).toEqual([path, 400]);
      const body = (await res.json()) as any;
      expect(body.error.message).toMatch(/nests deeper than \d+ levels/);
    }
    for (const bad of ['%', '%E0%A4%A', 'abc%zz']) {
      const res = await fetch(`${url}/compactor/sessions/${bad}`);
      expect([bad, res.status]).toEqual([bad, 400]);
      expect(((await res.json()) as any).error.message).toMatch(/not valid percent-encoding/);
    }
    // A request line `GET //` (a client's double slash) is answered, not fatal.
    const raw = await rawRequest(url, 'GET // HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 [45]\d\d /);
    expect((await post(url, '/v1/chat/completions', chat())).status).toBe(200);
    expect(cli.child.exitCode).toBeNull();
  });
});

/** Sends `text` as is over a TCP connection and resolves with the whole answer. */
async function rawRequest(url: string, text: string): Promise<string> {
  const { connect } = await import('node:net');
  const { hostname: host, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect(Number(port), host, () => socket.write(text));
    socket.on('data', (d) => (answer += d.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}
