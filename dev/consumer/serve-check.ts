import { spawn } from 'node:child_process';
import { sh } from './shell.js';
import type { PackageJson } from './tarball.js';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Places } from './checks.js';

interface PackageBin {
  name: string;
  bin?: Record<string, string>;
}

const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/** A model server on 127.0.0.1 that answers every Chat Completions request with one short reply. */
async function fakeChatUpstream(): Promise<{ url: string; bodies: unknown[]; close(): void }> {
  const bodies: unknown[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      bodies.push(JSON.parse(text));
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 0,
          model: 'gpt-4o',
          choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
        }),
      );
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, bodies, close: () => server.close() };
}

/**
 * (j) `compactor serve` from the installed bin: it prints its ready line, relays a short and a
 * large (paged) Chat Completions request to the upstream with its session headers, and exits 0 on SIGTERM.
 */
export async function runServe(places: Places, pkg: PackageBin, node: string): Promise<string> {
  const binPath = Object.values(pkg.bin ?? {})[0];
  if (!binPath) throw new Error('package.json has no bin');
  const upstream = await fakeChatUpstream();
  const args = ['serve', '--port', '0', '--capacity', '200000', '--openai-upstream', upstream.url];
  const child = spawn(node, [join(places.app, 'node_modules', pkg.name, binPath), ...args], {
    cwd: places.app,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
    let err = '';
    // The ready line, or the process ending without it (then its stderr says why).
    const url = await new Promise<string>((ok, fail) => {
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /serving on (http:\/\/\S+)/.exec(err);
        if (m) ok(m[1]);
      });
      void exited.then((code) =>
        fail(new Error(`compactor serve exited (${code}) before serving: ${err.trim()}`)),
      );
    });
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-consumer' },
      body: JSON.stringify({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Fix the failing test.' }],
      }),
    });
    const answer = (await res.json()) as { choices?: Array<{ message?: { content?: string } }> };
    const session = res.headers.get('x-compactor-session');
    if (res.status !== 200 || answer.choices?.[0]?.message?.content !== 'done' || !session)
      throw new Error(`serve answered ${res.status} (session header: ${session}): ${JSON.stringify(answer)}`);
    if (upstream.bodies.length !== 1)
      throw new Error(`upstream saw ${upstream.bodies.length} requests, not 1`);
    // A body of 128 KiB or more is read into pages of its own (a resizable ArrayBuffer): it must
    // reach the upstream whole on every Node the package supports.
    const large = Array.from(
      { length: 4000 },
      (_, i) => `line ${i}: the build log says step ${i * 7} passed.`,
    ).join('\n');
    const big = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-consumer' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: large }] }),
    });
    await big.arrayBuffer();
    const seen = upstream.bodies[1] as { messages?: Array<{ content?: unknown }> } | undefined;
    if (big.status !== 200 || seen?.messages?.[0]?.content !== large)
      throw new Error(
        `serve answered ${big.status} to a ${large.length}-character message, or the upstream saw it changed`,
      );
    child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) throw new Error(`compactor serve exited ${code} on SIGTERM: ${err.trim()}`);
    return `serve relayed a short and a large Chat Completions request (session ${session}) and exited 0 on SIGTERM`;
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    upstream.close();
  }
}

/** The proxy's Prometheus client is an optional peer: `compactor serve` without it ends with one line naming it. */
export function serveWithoutPeer(places: Places, pkg: PackageBin, node: string): string {
  const binPath = Object.values(pkg.bin ?? {})[0];
  if (!binPath) throw new Error('package.json has no bin');
  const bin = join(places.app, 'node_modules', pkg.name, binPath);
  const r = sh(node, [bin, 'serve', '--port', '0'], { cwd: places.app, allowFailure: true });
  const lines = r.stderr.trim().split('\n');
  if (
    r.status === 0 ||
    lines.length !== 1 ||
    !/needs the optional peer dependency "prom-client"/.test(lines[0]!)
  )
    throw new Error(`expected one line naming prom-client and a failure, got exit ${r.status}: ${r.stderr}`);
  return `exit ${r.status}: ${lines[0]}`;
}

/** Installs the proxy's optional peer at the version the repository develops with. */
export function installServePeer(places: Places, repoPkg: PackageJson): string {
  const version = repoPkg.devDependencies?.['prom-client'];
  if (!version) throw new Error('package.json: devDependencies has no prom-client');
  sh('npm', ['install', '--no-audit', '--no-fund', `prom-client@${version}`], { cwd: places.app });
  return `installed prom-client@${version}`;
}
