import { afterAll, describe, expect, it } from '@jest/globals';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '#src/cli/main.js';
import { deferred } from '#support/deferred.js';
import { useFakeProviders } from '#support/fake-providers.js';
import { agentSession, canonicalFile, cli, templateSummary, workDir } from '#support/cli-sessions.js';

const dir = workDir('time');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
canonicalFile(dir, 'session.json', agentSession());
// Every run and compact here uses --capacity 8000: the fakes hold each request to that window.
const fakes = useFakeProviders({ window: 8_000, summaryText: templateSummary() });
// Local over Chat Completions on the fake OpenAI server.
const route = () => ['--provider', 'openai-compatible', '--base-url', fakes.oai.url, '--model', 'm'];
const run = (args: string[], cwd = dir) =>
  cli(['run', 'session.json', ...route(), '--capacity', '8000', ...args], { cwd });

describe('bounded provider time in run and compact (S4)', () => {
  it('S4: the report shows the time limits in force: 120 s per request, 4 attempts, 300 s per call by default', async () => {
    const r = await run(['--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as { route: { http: unknown } };
    expect(j.route.http).toEqual({ timeoutMs: 120_000, retries: 3, retryBudgetMs: 300_000 });
    const human = await run([]);
    expect(human.out).toMatch(/^time limits: 120 s per request, up to 4 attempts, 300 s per provider call$/m);
    const offline = await cli(['run', 'session.json', '--json'], { cwd: dir });
    expect((JSON.parse(offline.out) as { route: { http: unknown } }).route.http).toBeNull();
  });

  it('S4: --timeout, --retries and --retry-budget bound a hung provider; the failure says how many attempts in how long', async () => {
    fakes.oai.script.push(...Array.from({ length: 12 }, () => ({ kind: 'hang' as const })));
    const before = fakes.oai.requests.length;
    const r = await run(['--timeout', '0.2', '--retries', '10', '--retry-budget', '0.5', '--json']);
    fakes.oai.script.length = 0;
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out) as { route: { http: unknown }; decision: string };
    expect(j.decision).toBe('failed');
    expect(j.route.http).toEqual({ timeoutMs: 200, retries: 10, retryBudgetMs: 500 });
    expect(r.err).toMatch(
      /^compactor: run: compaction failed \(.*\): .*timed out after .*gave up after [123] of 11 attempts in .*; limits: 200 ms per request, 500 ms in all\)\n$/,
    );
    const made = Number(/gave up after (\d+) of/.exec(r.err)?.[1]);
    expect(fakes.oai.requests.length - before).toBeLessThanOrEqual(made); // an attempt cut short may end before the server has read its body
  });

  it('S4: config http.timeoutMs / retries / retryBudgetMs are used, and flags win over them', async () => {
    const cwd = workDir('time-config', {
      encoding: 'chars',
      http: { timeoutMs: 90_000, retries: 0, retryBudgetMs: 100_000 },
    });
    canonicalFile(cwd, 'session.json', agentSession());
    const r = await run(['--json', '--retries', '2'], cwd);
    expect((JSON.parse(r.out) as { route: { http: unknown } }).route.http).toEqual({
      timeoutMs: 90_000,
      retries: 2,
      retryBudgetMs: 100_000,
    });
    const c = await cli(['compact', 'session.json', ...route(), '--capacity', '8000', '--retries', '0'], {
      cwd,
    });
    expect(c.code).toBe(0);
    expect(c.out).toMatch(/^time limits: 90 s per request, one attempt, 100 s per provider call$/m);
    rmSync(cwd, { recursive: true, force: true });
  });

  it('D3: a bad --timeout or config http value is one line naming it, exit 2', async () => {
    const flag = await run(['--timeout', 'soon']);
    expect(flag.code).toBe(2);
    expect(flag.err).toMatch(/^compactor: run: --timeout: expected a number of seconds \(got "soon"\)\n$/);
    const zero = await run(['--retry-budget', '0']);
    expect(zero.err).toMatch(/^compactor: run: --retry-budget: expected more than 0 seconds/);
    const cfg = join(dir, 'bad.json');
    writeFileSync(cfg, JSON.stringify({ http: { timeoutMs: -1 } }));
    const bad = await run(['--config', cfg]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^compactor: .*bad\.json: http\.timeoutMs: .*\n$/);
  });

  it('S4: when stderr is not a terminal, a waiting line names provider, model, attempt n/N and seconds', async () => {
    // The server holds its answer until the line has been seen: no race with the clock.
    const seen = deferred<void>();
    let text = '';
    const stderr = new Writable({
      write(chunk: Buffer, _enc, cb) {
        text += chunk.toString();
        if (/waiting for/.test(text)) seen.resolve();
        cb();
      },
    });
    const stdout = new Writable({ write: (_c, _e, cb) => cb() });
    fakes.oai.script.push({ kind: 'hold', until: seen.promise });
    const code = await main(['run', 'session.json', ...route(), '--capacity', '8000'], {
      stdout,
      stderr,
      cwd: dir,
      env: { COMPACTOR_PROGRESS_INTERVAL_MS: '20' },
      stderrIsTTY: false,
    });
    expect(code).toBe(0);
    expect(text).toMatch(/^compactor: waiting for openai-compatible m: attempt 1\/4, \d+ s\n/);
    expect(
      text
        .split('\n')
        .filter(Boolean)
        .every((l) => /^compactor: waiting for /.test(l)),
    ).toBe(true);
  });
});
