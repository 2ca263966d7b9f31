import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCompiledCli } from '#support/compiled-cli.js';
import type { FakeServer } from '#support/fake-http.js';
import { FAKE_ENCRYPTED, startFakeOpenAI } from '#support/fake-openai.js';
import { agentSession, canonicalFile, filesUnder, templateSummary, workDir } from '#support/cli-sessions.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

/**
 * `--out` in openai-chat after a native compaction (end to end through the
 * compiled CLI): the encrypted compaction item has no text a Chat Completions file could hold,
 * so the run is refused with one line naming the formats that can carry it — exit 2, no output
 * file, and the session directory exactly as it was before the run.
 */

const CAPACITY = 8_000; // every run's --capacity: the fake holds requests to it
const KEY = 'sk-FAKE-out-refusal-0123456789abcdef';
const dir = workDir('out-refusal');
let srv: FakeServer;
beforeAll(async () => {
  srv = await startFakeOpenAI({ window: CAPACITY, summaryText: templateSummary() });
});
afterAll(async () => {
  await srv.close();
  rmSync(dir, { recursive: true, force: true });
});

// The catalog trusts the fake as an OpenAI native host, so compaction goes to /responses/compact.
writeFileSync(
  join(dir, 'catalog.json'),
  JSON.stringify({ providers: { openai: { nativeHosts: ['127.0.0.1'] } } }),
);
canonicalFile(dir, 'first.json', agentSession(2)); // under the threshold: recorded, not compacted
canonicalFile(dir, 'grown.json', agentSession(30)); // the same session, grown past the threshold
const cli = (args: string[]) =>
  runCompiledCli(
    [
      ...args,
      ...['--provider', 'openai', '--model', 'gpt-5.4', '--base-url', srv.url, '--catalog', 'catalog.json'],
      ...['--api-key-env', 'FAKE_KEY', '--capacity', String(CAPACITY)],
    ],
    { cwd: dir, env: { PATH: process.env.PATH, FAKE_KEY: KEY } },
  );

describe('--out openai-chat after a native compaction, through the compiled CLI (D2)', () => {
  it.each(['run', 'compact'])(
    'D2/R1: %s that compacts natively with --out x.json --to openai-chat exits 2 with one line naming the formats that can carry the item; no file, store untouched',
    async (command) => {
      const store = `store-${command}`;
      const first = await cli(['run', 'first.json', '--session-dir', store, '--json']);
      expect([first.code, first.err]).toEqual([0, '']);
      expect(JSON.parse(first.out)).toMatchObject({ decision: 'below-threshold' });
      const before = filesUnder(join(dir, store));
      const sent = srv.requests.length;

      const r = await cli([
        command,
        'grown.json',
        '--session-dir',
        store,
        '--out',
        'x.json',
        '--to',
        'openai-chat',
      ]);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toMatch(
        /^compactor: [^\n]*openai-chat cannot carry the provider compaction item of message \d+ \(it has no summary text\); write openai-responses or canonical instead\n$/,
      );
      // The native compaction did happen (the refusal is about the file, not the provider).
      expect(srv.requests.slice(sent).map((q) => q.path)).toEqual(['/v1/responses/compact']);
      expect(existsSync(join(dir, 'x.json'))).toBe(false);
      expect(filesUnder(join(dir, store))).toEqual(before);
      for (const f of filesUnder(join(dir, store))) expect(f.text).not.toContain(FAKE_ENCRYPTED);
    },
  );
});
