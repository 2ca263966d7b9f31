/**
 * One worker process of the Restate tests and the benchmark: serves the `compactorSession`
 * object over HTTP/1.1 on a free port of 127.0.0.1 and prints `listening <port>` when ready.
 * Runs under Node 24 (the SDK needs 22 or newer). The session route comes from the
 * environment: WORKER_ROUTE (JSON route options, default offline) and WORKER_CAPACITY.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endpoint } from '../../src/restate/index.js';

const route = process.env.WORKER_ROUTE ? JSON.parse(process.env.WORKER_ROUTE) : { provider: 'offline' };
const capacity = Number(process.env.WORKER_CAPACITY ?? 32_000);
const handler = endpoint({
  session: { route, limits: { capacity }, http: { retries: 0, timeoutMs: 600_000 } },
}).handler({ bidirectional: false });
const server = createServer(handler);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
