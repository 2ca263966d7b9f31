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
 * catalog file), and the README's catalog example is that way back.
 */

const KEY = 'sk-FAKE-native-hosts-0123456789abcdef';
const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
const { dir, srv: server } = fakeOpenAIWorkspace('native-hosts');

const env = () => ({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server().url });
const args = (command: string) => [command, 'session.json', '--provider', 'openai', '--model', 'gpt-5.4'];
const noteLines = (out: string) =>
  out.split('\n').filter((l) => l.startsWith('note: openai summarizes locally'));

/** The README's catalog example (the JSON block of its catalog file section). */
function readmeCatalog(): string {
  const section = readme.slice(readme.indexOf('### Catalog file'));
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

  it("S1: with the README's catalog example the host is native again: /responses/compact, no note", async () => {
    writeFileSync(join(dir, 'catalog.json'), readmeCatalog());
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

  it('S1: only openai reads OPENAI_BASE_URL (and only anthropic ANTHROPIC_BASE_URL), as the README table says', () => {
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
    const row = readme.split('\n').find((l) => l.startsWith('| `provider.baseUrl` |'))!;
    expect(row).toContain('`OPENAI_BASE_URL` replaces it for provider `openai`');
    expect(row).toContain('`ANTHROPIC_BASE_URL` for `anthropic`');
    for (const ignoring of ['openresponses', 'xai', 'ollama']) expect(row).toContain(`\`${ignoring}\``);
  });
});
