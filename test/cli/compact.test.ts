import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportSession, readSessionFile } from '#src/formats/index.js';
import { openSessionStore } from '#src/store/index.js';
import { startFakeOpenAI, FAKE_ENCRYPTED } from '#support/fake-openai.js';
import { catalogWindow } from '#support/fake-window.js';
import type { FakeServer } from '#support/fake-http.js';
import {
  agentSession,
  canonicalFile,
  cli,
  filesUnder,
  templateSummary,
  workDir,
} from '#support/cli-sessions.js';

const dir = workDir('compact');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const session = agentSession();
canonicalFile(dir, 'session.json', session);
const compact = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  cli(['compact', 'session.json', ...args], { cwd: dir, env });

describe('compactor compact (manual /compact, offline)', () => {
  it('S3: always summarizes, even below the threshold; reports elapsed, mode, items and the cache note', async () => {
    // At 40,000 tokens the automatic turn stays below its threshold …
    const auto = await cli(['run', 'session.json', '--capacity', '40000', '--json'], { cwd: dir });
    expect(JSON.parse(auto.out)).toMatchObject({ decision: 'below-threshold', summaryCalls: 0 });
    // … while the manual /compact summarizes anyway.
    const r = await compact(['--capacity', '40000']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      new RegExp(
        `^manual compaction compacted in \\d+\\.\\d\\d s: ${session.length} → \\d+ context items`,
        'm',
      ),
    );
    expect(r.out).toMatch(/^strategy: local; summary calls: 1$/m);
    expect(r.out).toContain('note: the next request may reuse less of the provider prompt cache');
  });

  it('S3: --json fields; --out writes the compacted history; --session-dir records a manual boundary', async () => {
    const r = await compact([
      '--capacity',
      '8000',
      '--out',
      'compacted.json',
      '--session-dir',
      's1',
      '--json',
    ]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Record<string, any>;
    expect(j).toMatchObject({
      command: 'compact',
      status: 'compacted',
      mode: 'manual',
      strategy: 'local',
      requestedStrategy: 'local',
      fallbackReason: null,
      summaryCalls: 1,
      failure: null,
      items: { before: session.length },
      out: join(dir, 'compacted.json'),
      outFormat: 'canonical',
    });
    expect(j.items.after).toBeLessThan(session.length);
    expect(j.tokens.after).toBeLessThan(j.tokens.before);
    expect(j.note).toMatch(/cache/);
    const written = readSessionFile(join(dir, 'compacted.json')).sessions[0].messages;
    expect(written).toHaveLength(j.items.after);
    const store = openSessionStore(join(dir, 's1'), { create: false });
    expect(store.loadHistory()).toEqual(written);
    expect(store.listBoundaries()).toEqual([
      expect.objectContaining({ id: j.boundary, reason: 'manual', mode: 'local', before: session.length }),
    ]);
    expect(store.restoreAt(j.boundary)).toEqual(session);
    expect(store.loadSnapshot('compaction')).toMatchObject({ status: 'compacted', summaryCalls: 1 });
    store.close();
  });

  it('--instructions must not be blank (exit 2)', async () => {
    const r = await compact(['--instructions', '  ']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^compactor: compact: --instructions: expected instruction text.*\n$/);
  });
});

describe('compactor compact against provider fakes', () => {
  const KEY = 'sk-FAKE-compact-key-0123456789abcdef';
  const CAPACITY = 8_000; // compatible()'s --capacity: the fake holds requests to it
  const env = { FAKE_KEY: KEY };
  let srv: FakeServer;
  beforeAll(async () => {
    srv = await startFakeOpenAI({ window: CAPACITY, summaryText: templateSummary() });
  });
  afterAll(() => srv.close());
  afterEach(() => {
    srv.requests.length = 0;
    srv.script = [];
    srv.window = CAPACITY;
  });
  const compatible = () => [
    ...['--provider', 'openai-compatible', '--model', 'local-model', '--base-url', srv.url],
    ...['--api-key-env', 'FAKE_KEY', '--capacity', String(CAPACITY)],
  ];

  it('L8: --instructions reach the Local summary request (last user message)', async () => {
    const r = await compact(
      [...compatible(), '--instructions', 'Keep every failing test name.', '--json'],
      env,
    );
    expect(r.code).toBe(0);
    expect(srv.requests).toHaveLength(1);
    const last = srv.requests[0].body.messages.at(-1) as { role: string; content: string };
    expect(last.role).toBe('user');
    expect(last.content).toContain('## Goal');
    expect(last.content).toContain('Keep every failing test name.');
  });

  it("O1: the input file's own cache/tier fields reach the summary request; generation fields do not", async () => {
    const doc = JSON.parse(exportSession(session, 'openai-chat')) as Record<string, unknown>;
    writeFileSync(
      join(dir, 'chat.json'),
      JSON.stringify({
        model: 'other-model',
        prompt_cache_key: 'sess-9',
        service_tier: 'flex',
        temperature: 0.3,
        ...doc,
      }),
    );
    const r = await cli(['compact', 'chat.json', ...compatible(), '--json'], { cwd: dir, env });
    expect(r.code).toBe(0);
    expect(srv.requests[0].body).toMatchObject({ prompt_cache_key: 'sess-9', service_tier: 'flex' });
    expect(srv.requests[0].body).not.toHaveProperty('temperature');
  });

  it('O1, O3, S1: a catalog-trusted OpenAI host compacts natively via /responses/compact with the instructions', async () => {
    writeFileSync(
      join(dir, 'catalog.json'),
      JSON.stringify({ providers: { openai: { nativeHosts: ['127.0.0.1'] } } }),
    );
    srv.window = catalogWindow('openai', 'gpt-5.4'); // no --capacity: the model's window
    const r = await compact(
      [
        ...['--provider', 'openai', '--model', 'gpt-5.4', '--base-url', srv.url, '--api-key-env', 'FAKE_KEY'],
        ...[
          '--catalog',
          'catalog.json',
          '--instructions',
          'Keep the plan.',
          '--out',
          'native.json',
          '--json',
        ],
      ],
      env,
    );
    expect(r.err).toBe('');
    const j = JSON.parse(r.out) as Record<string, any>;
    expect(j).toMatchObject({ status: 'compacted', strategy: 'nativeStandalone', summaryCalls: 1 });
    expect(j.route).toMatchObject({ strategy: 'nativeStandalone', kind: 'openai' });
    expect(srv.requests.map((q) => q.path)).toEqual(['/v1/responses/compact']);
    expect(srv.requests[0].body).toMatchObject({ model: 'gpt-5.4', instructions: 'Keep the plan.' });
    expect(srv.requests[0].body).not.toHaveProperty('stream');
    expect(readFileSync(join(dir, 'native.json'), 'utf8')).toContain(FAKE_ENCRYPTED);
  });

  it('S4: a provider failure exits 1 with one bounded line; history, --out and store untouched; no key anywhere', async () => {
    // Like OpenAI, the fake echoes the rejected key inside its JSON error body.
    srv.script = [
      {
        kind: 'status',
        status: 401,
        body: {
          error: {
            message: `Incorrect API key provided: ${KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`,
            type: 'invalid_request_error',
            param: null,
            code: 'invalid_api_key',
          },
        },
      },
    ];
    const store = 'failed-store';
    const r = await compact(
      [...compatible(), '--out', 'never.json', '--session-dir', store, '--inspect=jsonl', '--json'],
      env,
    );
    expect(r.code).toBe(1);
    expect(r.err.split('\n')).toHaveLength(2); // one line plus its newline
    expect(r.err).toMatch(
      /^compactor: compact: compaction failed \(provider-error\): .*local-model.*HTTP 401.*invalid_api_key/,
    );
    expect(r.err).not.toContain('{');
    const j = JSON.parse(r.out) as Record<string, any>;
    expect(j).toMatchObject({ status: 'failed', note: null, out: null, boundary: null });
    expect(j.items.after).toBe(session.length);
    expect(j.failure.message.length).toBeLessThanOrEqual(300);
    expect(existsSync(join(dir, 'never.json'))).toBe(false);
    // A failed run records nothing: the directory is as before, so a retry simply runs again.
    const opened = openSessionStore(join(dir, store), { create: false });
    expect(opened.loadHistory()).toEqual([]);
    expect(opened.warnings()).toEqual([]);
    expect(opened.listBoundaries()).toEqual([]);
    opened.close();
    // The key was sent (auth works) but is printed or stored nowhere.
    expect(srv.requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
    for (const text of [r.out, r.err, ...filesUnder(join(dir, store)).map((f) => f.text)])
      expect(text).not.toContain(KEY);
    // The provider's words stay; only the key they echo is replaced (no secrets in output).
    expect(j.failure.message).toContain('invalid_api_key: Incorrect API key provided: [REDACTED]');
    // The inspection log bounds each string at 200 characters, which here ends inside the marker.
    expect(readFileSync(join(dir, store, 'inspect.jsonl'), 'utf8')).toContain(
      'Incorrect API key provided: [REDACTE',
    );
  });
});
