/**
 * A real Restate server, Node 24 workers serving the `compactorSession` object, and a TCP
 * balancer in front of them, for the Restate tests and the benchmark. Everything listens on
 * free ports of 127.0.0.1 and lives in a temp directory; `stop()` kills what was started.
 *
 * The packages come from an install outside the repository (`.ci/run` makes it):
 * COMPACTOR_RESTATE_HOME, default ~/.cache/context-compactor/restate, holding
 * `@restatedev/restate-server`, `@restatedev/restate-sdk` and `node@24` in its node_modules.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { archiveName, chunkKey } from '../../src/restate/session-archive.js';
import { OBJECT_NAME } from '../../src/restate/session-object.js';
import type { MemoryRecords, ThreadEvent } from '../../src/store/index.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

// Whatever this process started dies with it, even when a test fails before its cleanup.
const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of started) child.kill('SIGKILL');
});
function track(child: ChildProcess): ChildProcess {
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}

/** Where the Restate packages and Node 24 are installed. */
export interface RestateInstall {
  nodeModules: string;
  node24: string;
  server: string;
}

/** The install, or null when it is missing (the caller decides whether that fails). */
export function restateInstall(): RestateInstall | null {
  const home =
    process.env.COMPACTOR_RESTATE_HOME ?? join(homedir(), '.cache', 'context-compactor', 'restate');
  const nodeModules = join(home, 'node_modules');
  const install = {
    nodeModules,
    node24: join(nodeModules, 'node', 'bin', 'node'),
    server: join(nodeModules, '@restatedev', `restate-server-linux-${process.arch}`, 'bin', 'restate-server'),
  };
  const missing = [install.node24, install.server, join(nodeModules, '@restatedev', 'restate-sdk')].filter(
    (p) => !existsSync(p),
  );
  return missing.length === 0 ? install : null;
}

/** A free TCP port of 127.0.0.1 (bound and released; nothing else here picks ports). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/**
 * Polls `check` until it holds, for as long as `proc` runs: a slow start on a busy machine is
 * waited out (the caller's own time limit ends a hung one), a process that died fails at once.
 */
async function until(
  what: string,
  proc: ChildProcess,
  log: readonly string[],
  check: () => Promise<boolean>,
): Promise<void> {
  let ended = false;
  const exit = exited(proc).then(() => {
    ended = true;
  });
  while (!(await check().catch(() => false))) {
    if (ended) throw new Error(`${what}: the process exited first: ${log.join('').slice(-400)}`);
    await Promise.race([sleep(100), exit]);
  }
}

function exited(proc: ChildProcess): Promise<void> {
  return proc.exitCode !== null || proc.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => proc.once('exit', () => resolve()));
}

/** A SQL string literal. */
const quote = (v: string) => `'${v.replaceAll("'", "''")}'`;

/** A restate-server with its data in a temp directory; `restart()` keeps the data and ports. */
export class RestateServer {
  readonly dir = mkdtempSync(join(tmpdir(), 'compactor-restate-'));
  ingress = '';
  admin = '';
  private proc: ChildProcess | undefined;
  private ports: { ingress: number; admin: number; node: number } | undefined;
  readonly log: string[] = [];

  constructor(private readonly install: RestateInstall) {}

  async start(): Promise<void> {
    this.ports ??= { ingress: await freePort(), admin: await freePort(), node: await freePort() };
    const { ingress, admin, node } = this.ports;
    this.ingress = `http://127.0.0.1:${ingress}`;
    this.admin = `http://127.0.0.1:${admin}`;
    this.proc = track(
      spawn(
        this.install.server,
        [
          '--no-logo',
          '--listen-mode',
          'tcp',
          '--base-dir',
          join(this.dir, 'data'),
          '--node-name',
          'compactor',
        ],
        {
          env: {
            ...process.env,
            RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
            RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
            RESTATE_BIND_ADDRESS: `127.0.0.1:${node}`,
            RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${node}/`,
            RESTATE_LOG_FORMAT: 'compact',
            RESTATE_LOG_FILTER: 'warn',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      ),
    );
    const keep = (b: Buffer) => this.log.push(b.toString());
    this.proc.stdout!.on('data', keep);
    this.proc.stderr!.on('data', keep);
    await until('waiting for the Restate server to start', this.proc, this.log, async () => {
      const [a, i] = await Promise.all([
        fetch(`${this.admin}/health`),
        fetch(`${this.ingress}/restate/health`),
      ]);
      return a.ok && i.ok;
    });
  }

  /** Stops the server the way an operator would (SIGTERM) and waits for it to exit. */
  async stop(): Promise<void> {
    if (!this.proc) return;
    const proc = this.proc;
    this.proc = undefined;
    proc.kill('SIGTERM');
    await exited(proc);
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /**
   * Registers a deployment; over HTTP/1.1 (request-response) by default, so a balancer can
   * spread calls over workers. The latest deployment serves new calls.
   */
  async register(uri: string, http1 = true): Promise<void> {
    const res = await fetch(`${this.admin}/deployments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uri, use_http_11: http1, force: true }),
    });
    if (!res.ok) throw new Error(`registering ${uri}: ${res.status} ${await res.text()}`);
  }

  /** Calls handler `handler` of object `object`/`key` over the ingress; non-2xx answers throw. */
  async call<T>(object: string, key: string, handler: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.ingress}/${object}/${encodeURIComponent(key)}/${handler}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${handler} ${key}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  }

  /**
   * Every event session object `key` recorded, in order: the numbered chunks of its archive
   * (which must follow each other with no gap), then the events in its own state.
   */
  async sessionEvents(key: string): Promise<ThreadEvent[]> {
    const records = await this.call<MemoryRecords>(OBJECT_NAME, key, 'records');
    const events: ThreadEvent[] = [];
    while (events.length < (records.offset ?? 0)) {
      const start = events.length + 1;
      const chunk = await this.call<ThreadEvent[] | null>(
        archiveName(OBJECT_NAME),
        chunkKey(key, start),
        'events',
      );
      if (!chunk || chunk.length === 0) throw new Error(`${key}: no archived chunk starts at event ${start}`);
      events.push(...chunk);
    }
    events.push(...records.events);
    return events;
  }

  /** Rows of a SQL query of the admin API (its `state`, `sys_invocation` … tables). */
  async query<R>(sql: string): Promise<R[]> {
    const res = await fetch(`${this.admin}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: sql }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`query ${sql}: ${res.status} ${text}`);
    return (JSON.parse(text) as { rows: R[] }).rows;
  }

  /** Bytes of each state value of object `object`/`key`, read with the admin API's SQL query. */
  async stateBytes(object: string, key: string): Promise<Record<string, number>> {
    const rows = await this.query<{ key: string; bytes: number }>(
      `SELECT key, length(value) AS bytes FROM state WHERE service_name = ${quote(object)} AND service_key = ${quote(key)}`,
    );
    return Object.fromEntries(rows.map((r) => [r.key, Number(r.bytes)]));
  }

  /**
   * Replaces the state of object `object`/`key` with `values` (each kept as its JSON, as the
   * SDK keeps state), through the admin API: how a test writes state an older release left.
   */
  async setState(object: string, key: string, values: Record<string, unknown>): Promise<void> {
    const bytes = (v: unknown) => [...Buffer.from(JSON.stringify(v))];
    const res = await fetch(`${this.admin}/services/${encodeURIComponent(object)}/state`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        object_key: key,
        new_state: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, bytes(v)])),
      }),
    });
    if (!res.ok) throw new Error(`setting the state of ${object}/${key}: ${res.status} ${await res.text()}`);
  }

  /** Invocations of `object`/`handler` (any status) whose key starts with `keyPrefix`, by key. */
  async invocations(object: string, handler: string, keyPrefix: string): Promise<Record<string, number>> {
    const rows = await this.query<{ target_service_key: string }>(
      `SELECT target_service_key FROM sys_invocation WHERE target_service_name = ${quote(object)} AND target_handler_name = ${quote(handler)}`,
    );
    const counts: Record<string, number> = {};
    for (const { target_service_key: key } of rows)
      if (key.startsWith(keyPrefix)) counts[key] = (counts[key] ?? 0) + 1;
    return counts;
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A Node 24 process serving the object (dev/restate/worker.ts). */
export interface Worker {
  port: number;
  proc: ChildProcess;
  output: string[];
}

/** Starts a worker; `env` sets its route (WORKER_ROUTE, WORKER_CAPACITY). */
export async function startWorker(
  install: RestateInstall,
  env: Record<string, string> = {},
): Promise<Worker> {
  const proc = track(
    spawn(install.node24, ['--import', 'tsx', join(repoRoot, 'dev/restate/worker.ts')], {
      cwd: repoRoot,
      env: { ...process.env, NODE_OPTIONS: '', NODE_PATH: install.nodeModules, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const output: string[] = [];
  proc.stderr!.on('data', (b: Buffer) => output.push(b.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    proc.stdout!.on('data', (b: Buffer) => {
      seen += b.toString();
      output.push(b.toString());
      const m = /listening (\d+)/.exec(seen);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`worker exited (${code}): ${output.join('')}`)));
  });
  return { port, proc, output };
}

export async function stopWorker(w: Worker, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  w.proc.kill(signal);
  await exited(w.proc);
}

/**
 * A TCP balancer: each new connection goes to the next server that accepts it, so a dead
 * server's share moves to the living ones. It counts connections per server port, and says
 * where each client connection went (by the client's own port), so a test can tell which
 * server holds a request.
 */
export async function startBalancer(ports: number[]): Promise<{
  url: string;
  connections: Map<number, number>;
  /** The server port each client connection went to, by the client's port. */
  routes: Map<number, number>;
  close(): Promise<void>;
}> {
  let next = 0;
  const connections = new Map<number, number>(ports.map((p) => [p, 0]));
  const routes = new Map<number, number>();
  const sockets = new Set<Socket>();
  const connect = (client: Socket, tries: number): void => {
    const port = ports[next++ % ports.length]!;
    const upstream = createConnection({ host: '127.0.0.1', port });
    sockets.add(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      connections.set(port, connections.get(port)! + 1);
      if (client.remotePort !== undefined) routes.set(client.remotePort, port);
      // From here on the two sockets live and die together.
      upstream.once('close', () => client.destroy());
      client.once('close', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
      client.resume();
    });
    upstream.once('error', () => {
      sockets.delete(upstream);
      // A worker that refuses the connection is dead: try the next one.
      if (!connected && tries + 1 < ports.length) connect(client, tries + 1);
      else client.destroy();
    });
  };
  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    sockets.add(client);
    client.on('error', () => undefined);
    connect(client, 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections,
    routes,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The flags of a `compactor serve --engine restate` that keeps its sessions on `restate` and
 * sends Anthropic requests to `upstream`, with a fixed window and clearing off (so a tool loop
 * compacts).
 */
export function restateServeArgs(restate: RestateServer, upstream: string, window: number): string[] {
  return [
    '--capacity',
    String(window),
    '--engine',
    'restate',
    '--restate-ingress',
    restate.ingress,
    '--anthropic-upstream',
    upstream,
    '--no-clearing',
    '--clear-when-pass-buys-fewer',
    '0',
  ];
}
