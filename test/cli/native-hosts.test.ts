import { describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveRoute } from '#src/providers/catalog.js';
import { PROVIDER_PRESETS } from '#src/providers/catalog-data.js';
import { cli, fakeOpenAIWorkspace } from '#support/cli-sessions.js';

/**
 * OPENAI_BASE_URL pointing provider openai at a proxy turns native /responses/compact into a
 * Local summary. The text report says so in one line naming the way back (nativeHosts in a
 * catalog file), and the documented catalog example is that way back.
 */

const KEY = 'sk-FAKE-native-hosts-0123456789abcdef';
// The CLI page of the docs holds the catalog example and says which variables each provider reads.
const cliDoc = readFileSync(fileURLToPath(new URL('../../docs/cli.md', import.meta.url)), 'utf8');
const { dir, srv: server } = fakeOpenAIWorkspace('native-hosts');

const env = () => ({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server().url });
const args = (command: string) => [command, 'session.json', '--provider', 'openai', '--model', 'gpt-5.4'];
const noteLines = (out: string) =>
  out.split('\n').filter((l) => l.startsWith('note: openai summarizes locally'));

/** The documented catalog example (the JSON block of the catalog section of docs/cli.md). */
function documentedCatalog(): string {
  const section = cliDoc.slice(cliDoc.indexOf('## Configuration file and catalog'));
  return /```json\n([\s\S]*?)```/.exec(section)![1];
}

describe('OPENAI_BASE_URL on a proxy host (S1)', () => {
  it('S1: compact says in one line that openai summarizes locally and how to list the host under nativeHosts', async () => {
    server().requests.length = 0;
    const r = await cli([...args('compact'), '--capacity', '8000'], { cwd: dir, env: env() });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(server().requests.map((q) => q.path)).toEqual(['/v1/responses']);
    const [note, ...more] = noteLines(r.out);
    expect(more).toEqual([]);
    expect(note).toContain('(from OPENAI_BASE_URL) is on 127.0.0.1');
    expect(note).toContain('{"providers":{"openai":{"nativeHosts":["127.0.0.1"]}}}');
    expect(note).toContain('--catalog FILE');
  });

  it('S1: run says it too, even when no compaction was needed', async () => {
    const r = await cli([...args('run'), '--capacity', '400000'], { cwd: dir, env: env() });
    expect(r.code).toBe(0);
    expect(noteLines(r.out)).toHaveLength(1);
    const j = JSON.parse(
      (await cli([...args('run'), '--capacity', '400000', '--json'], { cwd: dir, env: env() })).out,
    );
    expect(j.route).toMatchObject({
      strategy: 'local',
      baseUrlEnv: 'OPENAI_BASE_URL',
      offNativeHost: '127.0.0.1',
    });
  });

  it('S1: with the documented catalog example the host is native again: /responses/compact, no note', async () => {
    writeFileSync(join(dir, 'catalog.json'), documentedCatalog());
    server().requests.length = 0;
    const r = await cli([...args('compact'), '--capacity', '8000', '--catalog', 'catalog.json'], {
      cwd: dir,
      env: env(),
    });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(server().requests.map((q) => q.path)).toEqual(['/v1/responses/compact']);
    expect(r.out).toMatch(/^strategy: nativeStandalone; summary calls: 1$/m);
    expect(noteLines(r.out)).toEqual([]);
  });

  it('S1: only openai reads OPENAI_BASE_URL (and only anthropic ANTHROPIC_BASE_URL), as the docs say', () => {
    const proxy = {
      OPENAI_BASE_URL: 'https://proxy.example/v1',
      ANTHROPIC_BASE_URL: 'https://proxy.example',
    };
    const honour: string[] = [];
    for (const [name, preset] of Object.entries(PROVIDER_PRESETS)) {
      const keys = preset.apiKeyEnv ? { [preset.apiKeyEnv]: KEY } : {};
      const baseUrl = preset.baseUrl ? undefined : 'http://127.0.0.1:9/v1';
      const route = resolveRoute({ provider: name, model: 'm', baseUrl }, { ...proxy, ...keys });
      if (route.baseUrl.startsWith('https://proxy.example')) honour.push(name);
    }
    expect(honour.sort()).toEqual(['anthropic', 'openai']);
    // The docs say the same: the two variables, each for its provider, and which providers ignore both.
    const said = cliDoc
      .slice(cliDoc.indexOf('The endpoint is `provider.baseUrl`'))
      .split('\n\n')[0]
      .replace(/\s+/g, ' ');
    expect(said).toContain('`OPENAI_BASE_URL` for provider `openai`');
    expect(said).toContain('`ANTHROPIC_BASE_URL` for `anthropic`');
    for (const ignoring of ['openresponses', 'xai', 'ollama']) expect(said).toContain(`\`${ignoring}\``);
  });
});
