import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { resolveRoute, lookupModel } from '#src/providers/catalog.js';
import { RouteError } from '#src/core/errors.js';

const KEY = 'sk-test-FAKEKEY0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'catalog-'));
const file = (name: string, json: unknown) => {
  const p = join(dir, name);
  writeFileSync(p, typeof json === 'string' ? json : JSON.stringify(json));
  return p;
};

describe('provider registry and model catalog', () => {
  it('S1: resolves default base URL, key env and catalog facts for each kind', () => {
    const o = resolveRoute({ provider: 'openai', model: 'gpt-5.4' }, { OPENAI_API_KEY: KEY });
    expect(o).toMatchObject({
      kind: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      apiKeyEnv: 'OPENAI_API_KEY',
      wire: 'responses',
      contextWindow: 400_000,
      encoding: 'o200k_base',
    });
    expect(o.apiKey()).toBe(KEY);
    const a = resolveRoute({ provider: 'anthropic', model: 'claude-opus-4-6' }, { ANTHROPIC_API_KEY: KEY });
    expect(a).toMatchObject({
      kind: 'anthropic',
      wire: 'messages',
      supportsContextEdits: true,
      maxOutputTokens: 128_000,
    });
    expect(resolveRoute({ provider: 'xai', model: 'grok-4' }, { XAI_API_KEY: KEY }).baseUrl).toBe(
      'https://api.x.ai/v1',
    );
    expect(
      resolveRoute({ provider: 'vercel', model: 'openai/gpt-5.4' }, { AI_GATEWAY_API_KEY: KEY })
        .contextWindow,
    ).toBe(400_000);
    const or = resolveRoute(
      { provider: 'openrouter', model: 'deepseek/deepseek-chat' },
      { OPENROUTER_API_KEY: KEY },
    );
    expect(or).toMatchObject({
      kind: 'openai-compatible',
      label: 'openrouter',
      contextWindow: 128_000,
      wire: 'chat',
    });
    expect(
      resolveRoute({ provider: 'gemini', model: 'gemini-2.5-pro' }, { GEMINI_API_KEY: KEY }).baseUrl,
    ).toContain('generativelanguage');
    expect(
      resolveRoute({ provider: 'deepseek', model: 'deepseek-chat' }, { DEEPSEEK_API_KEY: KEY }).apiKeyEnv,
    ).toBe('DEEPSEEK_API_KEY');
    expect(resolveRoute({ provider: 'openai', model: 'gpt-4' }, { OPENAI_API_KEY: KEY }).encoding).toBe(
      'cl100k_base',
    );
  });

  it('S4: the API key never appears in JSON, String or inspect output', () => {
    const r = resolveRoute({ provider: 'openai', model: 'gpt-5.4', apiKeyEnv: 'MY_KEY' }, { MY_KEY: KEY });
    expect(r.apiKeyEnv).toBe('MY_KEY');
    expect(JSON.stringify(r)).not.toContain(KEY);
    expect(String(r)).not.toContain(KEY);
    expect(inspect(r, { depth: 5, showHidden: true })).not.toContain(KEY);
    expect(JSON.stringify({ ...r })).not.toContain(KEY);
  });

  it('S1: missing keys, unknown providers and compatible kinds without a base URL are one-line RouteErrors', () => {
    expect(() => resolveRoute({ provider: 'openai', model: 'gpt-5.4' }, {})).toThrow(/set OPENAI_API_KEY/);
    expect(() => resolveRoute({ provider: 'nope', model: 'x' }, {})).toThrow(RouteError);
    expect(() => resolveRoute({ provider: 'openai-compatible', model: 'x' }, {})).toThrow(/base URL/);
    // keyless local servers are fine
    const l = resolveRoute({ provider: 'ollama', model: 'llama3' }, {});
    expect(l.apiKey()).toBeUndefined();
    expect(l.contextWindow).toBeUndefined();
  });

  it('S1: a user catalog file overrides and extends the bundled table; bad files name the field', () => {
    const good = file('good.json', {
      providers: {
        openai: { nativeHosts: ['127.0.0.1'] },
        mylab: { kind: 'openai-compatible', baseUrl: 'https://lab.example/v1', apiKeyEnv: 'LAB_KEY' },
      },
      models: [
        { provider: 'mylab', model: 'lab-7b', contextWindow: 32_000, streamingOnly: true },
        { model: 'gpt-5.4', contextWindow: 272_000 },
      ],
    });
    const lab = resolveRoute({ provider: 'mylab', model: 'lab-7b', catalogFile: good }, { LAB_KEY: KEY });
    expect(lab).toMatchObject({
      kind: 'openai-compatible',
      baseUrl: 'https://lab.example/v1',
      contextWindow: 32_000,
      streamingOnly: true,
    });
    const o = resolveRoute(
      { provider: 'openai', model: 'gpt-5.4', baseUrl: 'http://127.0.0.1:1/v1', catalogFile: good },
      {},
    );
    expect(o.contextWindow).toBe(272_000);
    expect(o.nativeHosts).toContain('127.0.0.1');
    const bad = file('bad.json', { models: [{ model: 'm', contextWindow: -5 }] });
    expect(() =>
      resolveRoute({ provider: 'openai', model: 'gpt-5.4', catalogFile: bad }, { OPENAI_API_KEY: KEY }),
    ).toThrow(/bad\.json: invalid catalog field models\.0\.contextWindow/);
    const extra = file('extra.json', { modelz: [] });
    expect(() =>
      resolveRoute({ provider: 'openai', model: 'gpt-5.4', catalogFile: extra }, { OPENAI_API_KEY: KEY }),
    ).toThrow(/extra\.json/);
    const notJson = file('broken.json', '{');
    expect(() =>
      resolveRoute({ provider: 'openai', model: 'gpt-5.4', catalogFile: notJson }, { OPENAI_API_KEY: KEY }),
    ).toThrow(/broken\.json: cannot read/);
  });

  it('T1: exact rows beat prefix rows, longer prefixes beat shorter', () => {
    expect(lookupModel('anthropic', 'anthropic', 'claude-opus-4-6-20260101')?.maxOutputTokens).toBe(128_000);
    expect(lookupModel('anthropic', 'anthropic', 'claude-opus-4-1')?.maxOutputTokens).toBe(32_000);
    expect(lookupModel('openai', 'openai', 'gpt-4-turbo-2024')?.encoding).toBe('cl100k_base');
  });
  it('S1: OPENAI_BASE_URL and ANTHROPIC_BASE_URL replace the default base URL, as the official SDKs do', () => {
    const env = {
      OPENAI_API_KEY: KEY,
      ANTHROPIC_API_KEY: KEY,
      OPENAI_BASE_URL: 'https://proxy.example/openai/v1/',
      ANTHROPIC_BASE_URL: 'https://proxy.example/anthropic',
    };
    expect(resolveRoute({ provider: 'openai', model: 'gpt-5.4' }, env).baseUrl).toBe(
      'https://proxy.example/openai/v1',
    );
    // The SDK convention is an origin; the SDK appends /v1/messages, so do we.
    expect(resolveRoute({ provider: 'anthropic', model: 'claude-opus-4-6' }, env).baseUrl).toBe(
      'https://proxy.example/anthropic/v1',
    );
    // An explicit base URL still wins over the environment.
    expect(
      resolveRoute({ provider: 'openai', model: 'gpt-5.4', baseUrl: 'http://127.0.0.1:9/v1' }, env).baseUrl,
    ).toBe('http://127.0.0.1:9/v1');
    // Other presets do not read another provider's variable.
    expect(resolveRoute({ provider: 'xai', model: 'grok-4' }, { ...env, XAI_API_KEY: KEY }).baseUrl).toBe(
      'https://api.x.ai/v1',
    );
  });

  it('S1: an Anthropic base URL works given as an origin or with /v1', () => {
    const env = { ANTHROPIC_API_KEY: KEY };
    for (const given of [
      'https://api.anthropic.com',
      'https://api.anthropic.com/',
      'https://api.anthropic.com/v1',
    ])
      expect(
        resolveRoute({ provider: 'anthropic', model: 'claude-opus-4-6', baseUrl: given }, env).baseUrl,
      ).toBe('https://api.anthropic.com/v1');
    expect(
      resolveRoute(
        {
          provider: 'anthropic-compatible',
          model: 'glm-4.6',
          baseUrl: 'https://glm.example/api/anthropic',
          apiKeyEnv: 'ANTHROPIC_API_KEY',
        },
        env,
      ).baseUrl,
    ).toBe('https://glm.example/api/anthropic/v1');
  });
});
