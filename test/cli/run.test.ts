import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readSessionFile } from '#src/formats/index.js';
import { isProtocolValid } from '#src/summary/index.js';
import { openSessionStore } from '#src/store/index.js';
import { startFakeAnthropic } from '#support/fake-anthropic.js';
import type { FakeServer } from '#support/fake-http.js';
import { agentSession, canonicalFile, cli, templateSummary, workDir } from '#support/cli-sessions.js';

// The VT Code preset: these tests check clearing and compaction at the default threshold.
const dir = workDir('run', { encoding: 'chars', preset: 'vtcode' });
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const session = agentSession();
canonicalFile(dir, 'session.json', session);
const run = (args: string[], opts: { env?: NodeJS.ProcessEnv; stderrIsTTY?: boolean } = {}) =>
  cli(['run', 'session.json', ...args], { cwd: dir, ...opts });

const JSON_FIELDS = [
  'boundary',
  'capacity',
  'clearedToFit',
  'clearing',
  'command',
  'decision',
  'elapsedMs',
  'failure',
  'fallbackReason',
  'file',
  'finalPressureTokens',
  'fit',
  'format',
  'guardReason',
  'inspect',
  'items',
  'missingSections',
  'out',
  'outFormat',
  'pressureTokens',
  'receipt',
  'repairRequests',
  'route',
  'session',
  'sessionDir',
  'strategy',
  'summaryCache',
  'summaryCalls',
  'thresholdTokens',
  'tokens',
  'warnings',
];

describe('compactor run (offline, the default route)', () => {
  it('H1–H3, H5: compacts over the threshold; --json has the documented stable fields', async () => {
    const started = Date.now();
    const r = await run(['--capacity', '8000', '--json']);
    const wallMs = Date.now() - started;
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Record<string, any>;
    expect(Object.keys(j).sort()).toEqual(JSON_FIELDS);
    expect(j).toMatchObject({
      command: 'run',
      format: 'canonical',
      decision: 'compacted',
      strategy: 'local',
      fallbackReason: null,
      summaryCalls: 1,
      capacity: 8000,
      thresholdTokens: 6000, // 75 % of 8,000 − 0 reserved
      failure: null,
      route: { name: 'offline', kind: 'offline', strategy: 'local', apiKeyEnv: null },
    });
    const t = j.tokens as { beforeClearing: number; afterClearing: number; afterCompaction: number };
    expect(t.beforeClearing).toBeGreaterThan(t.afterClearing);
    expect(t.afterClearing).toBeGreaterThanOrEqual(6000);
    expect(t.afterCompaction).toBeLessThan(6000);
    expect(j.pressureTokens).toBe(t.afterClearing);
    expect(j.finalPressureTokens).toBe(t.afterCompaction);
    expect(j.items.before).toBe(session.length);
    expect(j.items.after).toBeLessThan(session.length);
    // Elapsed time: whole milliseconds of this run, so never more than the time around the call.
    expect(Number.isInteger(j.elapsedMs)).toBe(true);
    expect(j.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(j.elapsedMs).toBeLessThanOrEqual(wallMs);
  });

  it('C10: run --json reports the cleared and protected counts of the projection', async () => {
    const j = JSON.parse((await run(['--capacity', '8000', '--json'])).out) as Record<string, any>;
    expect(j.clearing).toEqual({
      clearedResults: expect.any(Number),
      protectedBatches: expect.any(Number),
      protectedResults: expect.any(Number),
      clearedInputs: expect.any(Number),
    });
    expect(j.clearing.clearedResults).toBeGreaterThan(0);
    expect(j.clearing.protectedBatches).toBeGreaterThan(0);
    expect(j.clearing.protectedResults).toBeGreaterThanOrEqual(j.clearing.protectedBatches);
  });

  it('S3: the human report shows decision, tokens at each step, items, strategy, calls and elapsed', async () => {
    const r = await run(['--capacity', '8000']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^decision: compacted — pressure [\d,]+ ≥ threshold 6,000, [\d,]+ after compaction/m,
    );
    expect(r.out).toMatch(
      /^tokens: [\d,]+ before clearing → [\d,]+ after clearing → [\d,]+ after compaction$/m,
    );
    expect(r.out).toMatch(new RegExp(`^items: ${session.length} → \\d+$`, 'm'));
    expect(r.out).toMatch(/^strategy: local; summary calls: 1$/m);
    expect(r.out).toMatch(/^elapsed: \d+\.\d\d s$/m);
    expect(r.out).toContain('less of the provider prompt cache');
  });

  it('H2: below the threshold (large --capacity) no summary call is made', async () => {
    const r = await run(['--capacity', '1000000', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Record<string, any>;
    expect(j).toMatchObject({ decision: 'below-threshold', summaryCalls: 0, strategy: null });
    expect(j.tokens.afterCompaction).toBeNull();
    expect(j.items).toEqual({ before: session.length, after: session.length });
    expect(j.pressureTokens).toBeLessThan(j.thresholdTokens);
  });

  it('--threshold wins over the 75 % default (H5); config limits apply under flags', async () => {
    // 75 % of 30,000 is over the pressure; the explicit threshold is not.
    const low = JSON.parse((await run(['--capacity', '30000', '--threshold', '5000', '--json'])).out);
    expect(low).toMatchObject({ decision: 'compacted', thresholdTokens: 5000, summaryCalls: 1 });
    const cfgDir = workDir('run-cfg', { encoding: 'chars', limits: { capacity: 8000 } });
    canonicalFile(cfgDir, 'session.json', session);
    const viaConfig = JSON.parse((await cli(['run', 'session.json', '--json'], { cwd: cfgDir })).out);
    expect(viaConfig).toMatchObject({ capacity: 8000, decision: 'compacted' });
    const flagWins = JSON.parse(
      (await cli(['run', 'session.json', '--capacity', '1000000', '--json'], { cwd: cfgDir })).out,
    );
    expect(flagWins).toMatchObject({ capacity: 1000000, decision: 'below-threshold' });
    rmSync(cfgDir, { recursive: true, force: true });
  });

  it('--out writes the next request window atomically; it re-imports (and --to picks the format)', async () => {
    const r = await run(['--capacity', '8000', '--out', 'next.json', '--json']);
    const j = JSON.parse(r.out) as Record<string, any>;
    expect(j).toMatchObject({ out: join(dir, 'next.json'), outFormat: 'canonical' });
    const back = readSessionFile(join(dir, 'next.json'));
    expect(back.format).toBe('canonical');
    const messages = back.sessions[0].messages;
    expect(messages).toHaveLength(j.items.after);
    expect(isProtocolValid(messages)).toBe(true);
    expect(JSON.stringify(messages)).toContain('Previous conversation summary');

    await run(['--capacity', '8000', '--out', 'next-chat.json', '--to', 'openai-chat']);
    expect(readSessionFile(join(dir, 'next-chat.json')).format).toBe('openai-chat');
  });

  it('R1: --session-dir stores messages, artifact, boundary and checkpoint; restore recovers the full history', async () => {
    const r = await run(['--capacity', '8000', '--session-dir', 'store1', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Record<string, any>;
    expect(j.sessionDir).toBe(join(dir, 'store1'));
    expect(j.boundary).toMatch(/^compact-\d{6}$/);
    expect(existsSync(join(dir, 'store1', 'snapshots', 'turn.json'))).toBe(true);

    const store = openSessionStore(join(dir, 'store1'), { create: false });
    expect(store.loadHistory()).toHaveLength(j.items.after);
    expect(store.listBoundaries()).toEqual([
      expect.objectContaining({
        id: j.boundary,
        before: session.length,
        reason: 'automatic',
        strategy: 'local',
      }),
    ]);
    store.close();

    const listed = await cli(['restore', 'store1'], { cwd: dir });
    expect(listed.out).toContain(`${j.boundary as string}`);
    const restored = await cli(['restore', 'store1', '--at', j.boundary, '--out', 'full.json'], { cwd: dir });
    expect(restored.code).toBe(0);
    expect(readSessionFile(join(dir, 'full.json')).sessions[0].messages).toEqual(session);
  });

  it('R1: below the threshold the store gets the messages but no boundary', async () => {
    const r = await run(['--capacity', '1000000', '--session-dir', 'store2', '--json']);
    expect(JSON.parse(r.out).boundary).toBeNull();
    const store = openSessionStore(join(dir, 'store2'), { create: false });
    expect(store.loadHistory()).toEqual(session);
    expect(store.listBoundaries()).toEqual([]);
    store.close();
  });

  it('--inspect=FILE writes one JSON line per machine event; --inspect=jsonl goes into the session dir', async () => {
    await run(['--capacity', '8000', '--inspect=events.jsonl']);
    const lines = readFileSync(join(dir, 'events.jsonl'), 'utf8').trim().split('\n');
    const records = lines.map((l) => JSON.parse(l) as { type: string; actor: string });
    expect(records.some((r) => r.actor === 'compaction' && r.type === '@xstate.actor')).toBe(true);
    expect(records.some((r) => r.actor === 'clearToolResults')).toBe(true);
    // A second run truncates rather than appends.
    await run(['--capacity', '8000', '--inspect=events.jsonl']);
    expect(readFileSync(join(dir, 'events.jsonl'), 'utf8').trim().split('\n')).toHaveLength(lines.length);

    const r = await run(['--capacity', '8000', '--session-dir', 'store4', '--inspect=jsonl', '--json']);
    expect(JSON.parse(r.out).inspect).toBe(join(dir, 'store4', 'inspect.jsonl'));
    expect(readFileSync(join(dir, 'store4', 'inspect.jsonl'), 'utf8').length).toBeGreaterThan(0);
    // A bare --inspect means --inspect=jsonl.
    const bare = await run(['--capacity', '8000', '--session-dir', 'store5', '--inspect', '--json']);
    expect(bare.code).toBe(0);
    expect(JSON.parse(bare.out).inspect).toBe(join(dir, 'store5', 'inspect.jsonl'));
    expect(readFileSync(join(dir, 'store5', 'inspect.jsonl'), 'utf8').length).toBeGreaterThan(0);
  });

  it('progress: one updating line per machine state on a terminal; nothing on piped stderr', async () => {
    const tty = await run(['--capacity', '8000'], { stderrIsTTY: true });
    expect(tty.code).toBe(0);
    const states = tty.err
      .split('\r\x1b[2K')
      .filter(Boolean)
      .map((s) => s.replace(/ \(\d+\.\ds\)$/, '').replace(/^compactor: /, ''));
    for (const s of ['syncing', 'normalizing', 'clearing', 'estimating', 'compacting'])
      expect(states).toContain(s);
    expect(states.some((s) => s.startsWith('compacting › local › summarizingFlat'))).toBe(true);
    expect(tty.err.endsWith('\r\x1b[2K')).toBe(true); // the line is cleared at the end
    expect(tty.err).not.toContain('\n');

    const piped = await run(['--capacity', '8000'], { stderrIsTTY: false });
    expect(piped.err).toBe('');
  });

  it('H2: --no-clearing and --hierarchical reach the turn (more pressure, two summary calls)', async () => {
    const plain = JSON.parse((await run(['--capacity', '8000', '--json'])).out);
    const noClear = JSON.parse((await run(['--capacity', '8000', '--no-clearing', '--json'])).out);
    expect(noClear.tokens.afterClearing).toBe(noClear.tokens.beforeClearing);
    expect(noClear.tokens.afterClearing).toBeGreaterThan(plain.tokens.afterClearing);
    // Two bands need several user turns (a one-task session is a single protocol group).
    canonicalFile(dir, 'turns.json', agentSession(30, 1_600, 900, 5));
    const bands = await cli(['run', 'turns.json', '--capacity', '8000', '--hierarchical', '--json'], {
      cwd: dir,
    });
    expect(JSON.parse(bands.out)).toMatchObject({ decision: 'compacted', summaryCalls: 2 });
  });
});

describe('compactor run: bad flags and routes exit 2 with one line', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['non-numeric capacity', ['--capacity', 'abc'], /--capacity: expected a positive whole number/],
    ['zero threshold', ['--threshold', '0'], /--threshold: expected a positive whole number/],
    ['unknown flag', ['--bogus'], /Unknown option '--bogus'/],
    [
      'unknown provider',
      ['--provider', 'nope', '--model', 'm'],
      /unknown provider "nope" \(known: offline, openai/,
    ],
    ['missing model', ['--provider', 'openai'], /--model is required for provider "openai"/],
    ['missing key', ['--provider', 'openai', '--model', 'gpt-5.4'], /missing API key: set OPENAI_API_KEY/],
    ['bad base URL', ['--provider', 'openai-compatible', '--model', 'm', '--base-url', 'nope'], /--base-url/],
    ['base URL needed', ['--provider', 'openai-compatible', '--model', 'm'], /needs a base URL/],
    ['offline with a key', ['--api-key-env', 'X_KEY'], /--api-key-env: not used by the offline provider/],
    [
      'bad catalog',
      ['--provider', 'openai', '--model', 'm', '--catalog', 'bad-catalog.json'],
      /invalid catalog field/,
    ],
    ['bad --to', ['--to', 'yaml'], /yaml/],
    ['--out into a missing directory', ['--out', 'no/such/dir/x.json'], /--out: no such directory/],
    ['--out over the input', ['--out', 'session.json'], /--out: .* is an input of this command/],
  ];
  beforeAll(() => writeFileSync(join(dir, 'bad-catalog.json'), JSON.stringify({ models: [{ model: 1 }] })));

  it.each(cases)('%s', async (_name, args, pattern) => {
    const r = await run(['--session-dir', 'never-created', ...args], { env: { OPENAI_API_KEY: '' } });
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^compactor: [^\n]+\n$/);
    expect(r.err).toMatch(pattern);
    expect(existsSync(join(dir, 'never-created'))).toBe(false);
  });

  it('§14: a window too small for the task is one line, exit 2, and the session keeps no turn checkpoint', async () => {
    const task = 'Fix the failing date parser test; it breaks on leap years and on time zones. '.repeat(4);
    canonicalFile(dir, 'long-task.json', [
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: task },
    ]);
    const r = await cli(['run', 'long-task.json', '--capacity', '40', '--session-dir', 'too-small'], {
      cwd: dir,
    });
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(
      /^compactor: the context window of 40 tokens cannot hold even the fixed part of a request [^\n]+\n$/,
    );
    expect(existsSync(join(dir, 'too-small', 'snapshots', 'turn.json'))).toBe(false);
  });

  it('a missing FILE and extra arguments are one-line errors', async () => {
    expect((await cli(['run'], { cwd: dir })).err).toBe(
      'compactor: run: missing FILE (see compactor run --help)\n',
    );
    expect((await cli(['run', 'a', 'b'], { cwd: dir })).err).toBe(
      "compactor: run: unexpected argument 'b'\n",
    );
    const missing = await cli(['run', 'nope.json'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/^compactor: nope\.json: [^\n]+\n$/);
  });
});

describe('compactor run: Anthropic inline route (A4)', () => {
  let srv: FakeServer;
  const KEY = 'sk-ant-FAKE-anthropic-key-0123456789';
  // Over the inline compact trigger (50,000 tokens) at a window the inline request can reach it in.
  canonicalFile(dir, 'big.json', agentSession(80, 2_000, 4_000));
  const big = (args: string[], env: NodeJS.ProcessEnv) =>
    cli(['run', 'big.json', ...args], { cwd: dir, env });
  beforeAll(async () => {
    srv = await startFakeAnthropic({
      window: 90_000, // the runs' --capacity
      script: [{ kind: 'no-compaction' }],
      summaryText: templateSummary(),
    });
  });
  afterAll(() => srv.close());

  it('A4, S1: an inline pass that does not compact falls back to Local; --json says why', async () => {
    const r = await big(
      [
        ...['--provider', 'anthropic', '--model', 'claude-opus-4-6', '--base-url', srv.url],
        ...['--api-key-env', 'FAKE_ANTHROPIC_KEY', '--capacity', '90000', '--json'],
      ],
      { FAKE_ANTHROPIC_KEY: KEY },
    );
    expect(r.err).toBe('');
    const j = JSON.parse(r.out) as Record<string, any>;
    expect(j).toMatchObject({
      decision: 'compacted',
      strategy: 'local',
      fallbackReason: 'no-compaction',
      summaryCalls: 2, // the inline request, then the Local summary

      route: { name: 'anthropic', strategy: 'nativeInline', apiKeyEnv: 'FAKE_ANTHROPIC_KEY' },
    });
    expect(srv.requests).toHaveLength(2);
    expect(srv.requests[0].body.context_management.edits.at(-1).type).toBe('compact_20260112');
    expect(srv.requests[1].body.context_management).toBeUndefined();
    expect(srv.requests.every((q) => q.headers['x-api-key'] === KEY)).toBe(true);
    expect(r.out).not.toContain(KEY);
    srv.script.push({ kind: 'no-compaction' });
    const human = await big(
      [
        ...['--provider', 'anthropic', '--model', 'claude-opus-4-6', '--base-url', srv.url],
        ...['--api-key-env', 'FAKE_ANTHROPIC_KEY', '--capacity', '90000'],
      ],
      { FAKE_ANTHROPIC_KEY: KEY },
    );
    expect(human.out).toMatch(
      /^strategy: local — fell back from nativeInline: no-compaction; summary calls: 2$/m,
    );
  });
});

describe('compactor run: unknown context window', () => {
  it('H5: with no capacity the threshold is unknown, no summary call is made, and the report says how to fix it', async () => {
    const r = await run([
      '--provider',
      'openai-compatible',
      '--base-url',
      'http://127.0.0.1:9/v1',
      '--model',
      'x',
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^decision: below-threshold — threshold unknown \(capacity unknown\)$/m);
    expect(r.out).toMatch(/^strategy: local \(not needed\); summary calls: 0$/m);
    expect(r.out).toMatch(/^hint: .*--capacity N/m);
  });
});
