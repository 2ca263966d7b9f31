/**
 * One worker process of the Restate tests and the benchmark: serves the `compactorSession`
 * object over HTTP/1.1 on a free port of 127.0.0.1 and prints `listening <port>` when ready.
 * Runs under Node 24 (the SDK needs 22 or newer). The session route comes from the
 * environment: WORKER_ROUTE (JSON route options, default offline) and WORKER_CAPACITY;
 * WORKER_SESSION (JSON) adds other session options (compaction, limits …).
 * WORKER_BENCH_STEPS=1 adds the object `benchSteps`, whose `run(n)` records n empty steps
 * (the benchmark's cost of one recorded step). WORKER_HTTP2=1 serves HTTP/2 instead (one
 * worker per deployment; register without --use-http1.1).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endpoint } from '../../src/restate/index.js';
import { restateSdk, type ObjectContext } from '../../src/restate/sdk.js';

const route = process.env.WORKER_ROUTE ? JSON.parse(process.env.WORKER_ROUTE) : { provider: 'offline' };
const capacity = Number(process.env.WORKER_CAPACITY ?? 32_000);
const extra = process.env.WORKER_SESSION ? JSON.parse(process.env.WORKER_SESSION) : {};
const served = endpoint({
  session: {
    route,
    ...extra,
    limits: { capacity, ...extra.limits },
    http: { retries: 0, timeoutMs: 600_000 },
  },
});
if (process.env.WORKER_BENCH_STEPS === '1') {
  const sdk = restateSdk();
  served.bind(
    sdk.object({
      name: 'benchSteps',
      handlers: {
        run: sdk.handlers.object.exclusive(async (ctx: ObjectContext, n: number) => {
          for (let i = 0; i < n; i++) await ctx.run('step', async () => i);
          return n;
        }),
      },
    }),
  );
}
if (process.env.WORKER_HTTP2 === '1') {
  // HTTP/2, one stream per call: recorded steps are acknowledged on the open stream.
  const port = await served.listen(0);
  process.stdout.write(`listening ${port}\n`);
} else {
  const server = createServer(served.handler({ bidirectional: false }));
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
  });
}
