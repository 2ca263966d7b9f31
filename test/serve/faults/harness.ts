import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSessionRecords } from '#src/session/stored-history.js';
import { EVENTS_FILE } from '#src/store/artifacts.js';
import { startFakeAgentUpstream, type FakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import { deferred, type Deferred } from '#support/deferred.js';
import { startServeCli, stopRunningClis, type CliChild } from '#support/compiled-cli.js';

/** What the fault suite runs against: `compactor serve` as a process in front of the fake model. */

export const WINDOW = 16_000;
export const KEY = 'sk-fault-suite-credential-123';

const dirs: string[] = [];
const upstreams: FakeAgentUpstream[] = [];
const gates: Deferred<void>[] = [];

/** Ends what a test started: its serve processes first, then the held requests and the fakes. */
export async function cleanUp(): Promise<void> {
  await stopRunningClis();
  for (const g of gates.splice(0)) g.resolve();
  for (const u of upstreams.splice(0)) await u.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'compactor-faults-'));
  dirs.push(d);
  return d;
}

export async function fakeUpstream(): Promise<FakeAgentUpstream> {
  const upstream = await startFakeAgentUpstream({ window: WINDOW });
  upstreams.push(upstream);
  return upstream;
}

/** A gate a test opens itself (opened at the latest when the test ends). */
export function gate(): Deferred<void> {
  const g = deferred<void>();
  gates.push(g);
  return g;
}

export interface Serve {
  cli: CliChild;
  url: string;
}

/** Starts `compactor serve` on a free port in `cwd` with its data in `cwd/sessions`. */
export function startServe(upstreamUrl: string, cwd: string, extra: string[] = []): Promise<Serve> {
  return startServeCli(
    [
      '--capacity',
      String(WINDOW),
      '--anthropic-upstream',
      upstreamUrl,
      '--openai-upstream',
      upstreamUrl,
      '--data-dir',
      'sessions',
      ...extra,
    ],
    { cwd },
  );
}

/**
 * Holds the next request the fake model gets until `release` opens; `held` settles when it
 * arrived, `closed` when its connection closed (answered, or dropped by the proxy).
 */
export function holdNext(upstream: FakeAgentUpstream, release: Deferred<void> = gate()) {
  const held = deferred<void>();
  const closed = deferred<void>();
  upstream.script.push({
    kind: 'hold',
    until: release.promise,
    onHeld: () => held.resolve(),
    onClosed: () => closed.resolve(),
  });
  return { held: held.promise, closed: closed.promise, release };
}

export function post(url: string, path: string, body: unknown, init: RequestInit = {}) {
  return fetch(`${url}${path}`, {
    method: 'POST',
    ...init,
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${KEY}`,
      ...(init.headers as Record<string, string> | undefined),
    },
    body: JSON.stringify(body),
  });
}

/** A chat conversation of `turns` question/answer pairs of about 600 tokens each, then a last question. */
export function longChat(turns: number, last = 'Now write the report.') {
  const text = (who: string, i: number) =>
    `${who} ${i}: ` +
    Array.from({ length: 120 }, (_, k) => `point ${i}.${k} about module ${(i * 7 + k) % 13}`).join(', ');
  return [
    { role: 'system', content: 'You review code.' },
    ...Array.from({ length: turns }, (_, i) => [
      { role: 'user', content: text('Question', i) },
      { role: 'assistant', content: text('Answer', i) },
    ]).flat(),
    { role: 'user', content: last },
  ];
}

/** The value of a Prometheus counter line of the proxy's `/metrics` (0 when absent). */
export async function counter(url: string, line: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? 0 : Number(found.split(' ').pop());
}

/** The messages every branch under a data directory recorded (as the store reads them), by directory name. */
export function storedMessages(dataDir: string): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  for (const name of readdirSync(dataDir)) {
    if (!existsSync(join(dataDir, name, EVENTS_FILE))) continue;
    const records = openSessionRecords(join(dataDir, name));
    try {
      out.set(
        name,
        records.events().flatMap((e) => (e.type === 'message.appended' ? [e.message] : [])),
      );
    } finally {
      records.close();
    }
  }
  return out;
}

/** A streamed Anthropic request to the proxy, with `extra` fields in its body. */
export function streamMessages(url: string, content: string, extra: object = {}, signal?: AbortSignal) {
  return fetch(`${url}/v1/messages`, {
    method: 'POST',
    ...(signal ? { signal } : {}),
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'sk-x',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify({
      model: 'claude-sonnet-4-6',
      max_tokens: 256,
      stream: true,
      messages: [{ role: 'user', content }],
      ...extra,
    }),
  });
}
