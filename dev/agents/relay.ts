import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A transparent relay between an agent and what it talks to (the proxy, or the model directly):
 * every request and response passes through byte for byte, streamed, and the relay writes down
 * what the agent got back. That is where a refusal by the proxy shows: an error answer the
 * model never sent.
 */

export interface RelayedExchange {
  method: string;
  path: string;
  status: number;
  /** The start of an error answer's body (non-2xx only). */
  error?: string;
  /** The request body as the agent sent it (POST only). */
  body?: string;
}

export interface Relay {
  /** `http://127.0.0.1:PORT`, the root the agent is pointed at. */
  root: string;
  exchanges: RelayedExchange[];
  close(): Promise<void>;
}

/** Starts a relay on 127.0.0.1 (a random port) in front of `target` (a root URL). */
export async function startRelay(target: string): Promise<Relay> {
  const to = new URL(target);
  const exchanges: RelayedExchange[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const sent: Buffer[] = [];
    if (req.method === 'POST') req.on('data', (c: Buffer) => sent.push(c));
    const out = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: to.host },
      },
      (answer) => {
        const status = answer.statusCode ?? 0;
        const exchange: RelayedExchange = { method: req.method ?? '', path: req.url ?? '', status };
        if (sent.length > 0) exchange.body = Buffer.concat(sent).toString('utf8');
        exchanges.push(exchange);
        res.writeHead(status, answer.headers);
        const ok = status >= 200 && status < 300;
        let kept = '';
        answer.on('data', (c: Buffer) => {
          if (!ok && kept.length < 2_000) kept += c.toString('utf8');
          res.write(c);
        });
        answer.on('end', () => {
          if (!ok) exchange.error = kept.slice(0, 2_000);
          res.end();
        });
        answer.on('error', () => res.destroy());
      },
    );
    out.on('error', (e) => {
      exchanges.push({ method: req.method ?? '', path: req.url ?? '', status: 0, error: e.message });
      res.destroy();
    });
    // The agent gave up: the request behind it stops too.
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    root: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
