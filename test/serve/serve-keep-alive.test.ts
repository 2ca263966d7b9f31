import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { request } from 'undici';
import { holdIdleConnections, KEEP_ALIVE_MS } from '#src/serve/keep-alive.js';
import { startServer, type RunningServer } from '#src/serve/index.js';

// A proxy whose loop is held up (many large requests at once) must still answer a request a
// client sent in time on an idle connection. The loop is held here by the test itself, for a
// known time, on a server with a short keep-alive.
const IDLE_MS = 100;
// Past the keep-alive and the second Node adds to it before it closes an idle connection.
const HELD_MS = IDLE_MS + 2_000;

const servers: Server[] = [];
const proxies: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
  for (const p of proxies.splice(0)) await p.close();
});

async function heldServer(): Promise<number> {
  const server = createServer((req, res) => res.end(`answered ${req.url}`));
  holdIdleConnections(server, IDLE_MS);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Everything the server sent until it closed the connection. */
function readUntilClosed(socket: Socket): Promise<{ text: string; error?: string }> {
  let text = '';
  let error: string | undefined;
  socket.on('data', (d: Buffer) => (text += d.toString()));
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
  return new Promise((resolve) => socket.on('close', () => resolve({ text, ...(error ? { error } : {}) })));
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: proxy\r\n\r\n`;

describe('compactor serve keep-alive', () => {
  it('answers a request sent on an idle connection while the loop was held past the keep-alive', async () => {
    const socket = connect(await heldServer(), '127.0.0.1');
    const closed = readUntilClosed(socket);
    socket.write(get('/first'));
    await new Promise((resolve) => socket.once('data', resolve));
    // The next request reaches the server while its loop is held, the connection idle.
    socket.write(get('/second'));
    const until = performance.now() + HELD_MS;
    while (performance.now() < until);
    const { text, error } = await closed;
    expect(error).toBeUndefined();
    expect(text).toContain('answered /first');
    expect(text).toContain('answered /second');
  });

  it('still closes a connection nothing more came on', async () => {
    const socket = connect(await heldServer(), '127.0.0.1');
    const closed = readUntilClosed(socket);
    socket.write(get('/only'));
    await new Promise((resolve) => socket.once('data', resolve));
    const { text, error } = await closed;
    expect(error).toBeUndefined();
    expect(text).toContain('answered /only');
  });

  it('tells clients it keeps idle connections longer than they keep theirs', async () => {
    const proxy = await startServer({ port: 0 });
    proxies.push(proxy);
    const res = await request(`${proxy.url}/`);
    await res.body.text();
    expect(res.headers['keep-alive']).toBe(`timeout=${KEEP_ALIVE_MS / 1000}`);
  });
});
