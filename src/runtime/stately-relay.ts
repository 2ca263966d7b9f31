import { once } from 'node:events';
import { loadOptional } from '../core/optional-package.js';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { InspectionEvent } from 'xstate';
import type { WebSocket, WebSocketServer } from 'ws';
import { redactSecrets } from '../core/redact.js';
import { summarizeForLog } from './inspection.js';
import { statelyBridgePage } from './stately-page.js';

/** Options of {@link createStatelyInspector}. */
export interface StatelyInspectorOptions {
  /** Port on 127.0.0.1 (default 8080; 0 picks a free one). */
  port?: number;
  /** When the port is taken, listen on a free one instead of failing (default: true when `port` is not given). */
  fallbackToFreePort?: boolean;
  /** Values of secret-named variables here are removed from every message (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/** A started Stately inspector relay: pass `inspect` to the runner, `stop()` when done. */
export interface StatelyInspector {
  inspect: (event: InspectionEvent) => void;
  /** The page to open in a browser: the Stately inspector, fed by this process. */
  url: string;
  /** The relay's WebSocket address (the page connects here; so may any WebSocket client). */
  wsUrl: string;
  port: number;
  /** Resolves true once a viewer is connected, false when `ms` passed (or `signal` fired) without one. */
  waitForViewer(ms: number, signal?: AbortSignal): Promise<boolean>;
  /** Sends what is still queued, closes the viewers' connections and the server. */
  stop(): Promise<void>;
}

// A viewer that connects late still sees the run from its start, up to this many messages.
const REPLAY_LIMIT = 1_000;
// A viewer that does not answer the closing handshake is cut off after this long.
const CLOSE_GRACE_MS = 2_000;

/**
 * Starts the Stately inspector for a Node process (`--inspect=stately`): a small HTTP and
 * WebSocket relay on 127.0.0.1. Its page embeds https://stately.ai/inspect (so it needs a
 * browser and network) and forwards the events it receives over the WebSocket. Unlike
 * `@statelyai/inspect/server` it reports when a viewer connects (so a caller can wait a
 * bounded time), binds to the loopback address only, refuses WebSocket connections from other
 * web pages, and summarizes and redacts every message like the JSONL log. The event format is
 * the package's own (`createInspector`); both packages load only when this is called.
 */
export async function createStatelyInspector(
  options: StatelyInspectorOptions = {},
): Promise<StatelyInspector> {
  const [{ createInspector }, { WebSocketServer }] = await Promise.all([
    loadOptional(() => import('@statelyai/inspect'), '@statelyai/inspect', 'the Stately inspector'),
    loadOptional(() => import('ws'), 'ws', 'the Stately inspector'),
  ]);
  const env = options.env ?? process.env;
  const http = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(statelyBridgePage());
  });
  const port = await listen(
    http,
    options.port ?? 8080,
    options.fallbackToFreePort ?? options.port === undefined,
  );
  const wss = new WebSocketServer({
    server: http,
    verifyClient: ({ req }: { req: IncomingMessage }) => sameOrigin(req, port),
  });
  const sent: string[] = [];
  let stopped = false;
  const inspector = createInspector(
    {
      send(event) {
        if (stopped) return;
        const text = redactSecrets(JSON.stringify(summarizeStatelyEvent(event)), env);
        sent.push(text);
        if (sent.length > REPLAY_LIMIT) sent.shift();
        for (const client of wss.clients) if (client.readyState === client.OPEN) client.send(text);
      },
    },
    { serializationDepthLimit: 8 },
  );
  wss.on('connection', (client) => {
    for (const text of sent) client.send(text);
  });
  return {
    inspect: (event) => inspector.inspect.next?.(event),
    url: `http://127.0.0.1:${port}/`,
    wsUrl: `ws://127.0.0.1:${port}/`,
    port,
    waitForViewer: (ms, signal) => waitForViewer(wss, ms, signal),
    async stop() {
      if (stopped) return;
      // The inspector converts each event on a 0 ms timer; this one runs after those.
      await sleep(0);
      stopped = true;
      await Promise.all([...wss.clients].map(closeViewer));
      wss.close();
      http.closeAllConnections();
      http.close();
    },
  };
}

/** Listens on 127.0.0.1:`port`; a taken port falls back to a free one when allowed. */
async function listen(http: Server, port: number, fallback: boolean): Promise<number> {
  try {
    http.listen(port, '127.0.0.1');
    await once(http, 'listening');
  } catch (e) {
    if (!fallback || (e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
    http.listen(0, '127.0.0.1');
    await once(http, 'listening');
  }
  return (http.address() as AddressInfo).port;
}

/** Programs (no Origin header) and the relay's own page may connect; other web pages may not. */
function sameOrigin(req: IncomingMessage, port: number): boolean {
  const origin = req.headers.origin;
  return (
    origin === undefined || origin === `http://127.0.0.1:${port}` || origin === `http://localhost:${port}`
  );
}

async function waitForViewer(wss: WebSocketServer, ms: number, signal?: AbortSignal): Promise<boolean> {
  if (wss.clients.size > 0) return true;
  const done = new AbortController();
  const stop = () => done.abort();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    return await Promise.race([
      once(wss, 'connection', { signal: done.signal }).then(() => true),
      sleep(ms, false, { signal: done.signal }),
    ]);
  } catch {
    return false; // aborted by `signal`
  } finally {
    signal?.removeEventListener('abort', stop);
    done.abort();
  }
}

/** Closes one viewer's connection after what was sent to it; a silent viewer is cut off. */
async function closeViewer(client: WebSocket): Promise<void> {
  const closed = once(client, 'close');
  client.close(1000, 'run finished');
  const cutOff = setTimeout(() => client.terminate(), CLOSE_GRACE_MS);
  await closed;
  clearTimeout(cutOff);
}

/**
 * What a viewer may see of one Stately event: the snapshot's status and state, its context,
 * output and error and the event summarized like the JSONL log (message arrays become counts,
 * long strings are cut, key-named fields redacted); child actors by id only (a child
 * reference holds the whole actor system).
 */
function summarizeStatelyEvent(event: object): unknown {
  const e = event as { snapshot?: Record<string, unknown>; event?: unknown };
  const out: Record<string, unknown> = { ...e };
  if (e.event !== undefined) out.event = summarizeForLog(e.event);
  if (e.snapshot && typeof e.snapshot === 'object') {
    const { status, value, context, output, error, children } = e.snapshot;
    out.snapshot = {
      status,
      value: summarizeForLog(value),
      context: summarizeForLog(context),
      ...(output === undefined ? {} : { output: summarizeForLog(output) }),
      ...(error === undefined ? {} : { error: summarizeForLog(error) }),
      ...(children && typeof children === 'object' ? { children: Object.keys(children) } : {}),
    };
  }
  return out;
}
