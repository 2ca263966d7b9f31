import { afterAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/index.js';
import type { Json } from '#src/messages/message.js';
import { createCompactorSession, type CompactorSessionOptions } from '#src/session/index.js';
import { useFakeProviders } from '#support/fake-providers.js';
import { agentSession, templateSummary } from '#support/session/fixtures.js';

/**
 * The cache and tier fields the caller gives with its own request (`prompt_cache_key`,
 * `service_tier`, `safety_identifier` …) reach every request Compactor builds for it: the
 * Local summary on each wire, /responses/compact and the Anthropic inline request. Fields
 * that change generation (temperature) are not forwarded.
 */

afterAll(freeEncoders);
const history = agentSession(100_000); // over the inline compact trigger (50,000 tokens)
const HTTP = { retries: 0, timeoutMs: 120_000 };
const KEY = { apiKeyEnv: 'FAKE_KEY', env: { FAKE_KEY: 'fake-key-0123456789' } };
const OPENAI_FIELDS: Record<string, Json> = {
  prompt_cache_key: 'sess-42',
  service_tier: 'flex',
  safety_identifier: 'user-7',
  prompt_cache_retention: '24h',
  temperature: 0.2,
};
const ANTHROPIC_FIELDS: Record<string, Json> = {
  service_tier: 'standard_only',
  metadata: { user_id: 'user-7' },
  cache_control: { type: 'ephemeral' },
  temperature: 0.2,
};

const tmp = mkdtempSync(join(tmpdir(), 'compactor-fields-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const catalog = join(tmp, 'native.json');
writeFileSync(catalog, JSON.stringify({ providers: { openai: { nativeHosts: ['127.0.0.1'] } } }));

const CAPACITY = 200_000; // every session below: the fakes hold requests to it
const fakes = useFakeProviders({ window: CAPACITY, summaryText: templateSummary() });
beforeEach(() => {
  fakes.oai.requests.length = 0;
  fakes.ant.requests.length = 0;
});

async function compactWith(route: CompactorSessionOptions['route'], requestFields: Record<string, Json>) {
  const s = createCompactorSession({
    history,
    route,
    limits: { capacity: CAPACITY },
    http: HTTP,
    envelope: { provider: route!.provider, model: route!.model!, requestFields },
  });
  const r = await s.compact();
  expect(r.status).not.toBe('failed');
  return s;
}

describe('caller cache/tier fields are forwarded (O1)', () => {
  it('O1: Chat Completions summary carries prompt_cache_key, service_tier, safety_identifier; not temperature', async () => {
    await compactWith(
      { provider: 'openai-compatible', model: 'deepseek-chat', baseUrl: fakes.oai.url, ...KEY },
      OPENAI_FIELDS,
    );
    expect(fakes.oai.requests[0].path).toBe('/v1/chat/completions');
    expect(fakes.oai.requests[0].body).toMatchObject({
      prompt_cache_key: 'sess-42',
      service_tier: 'flex',
      safety_identifier: 'user-7',
      prompt_cache_retention: '24h',
    });
    expect(fakes.oai.requests[0].body).not.toHaveProperty('temperature');
  });

  it('O1: Responses summary carries them too', async () => {
    await compactWith(
      { provider: 'openai', model: 'gpt-5.4', baseUrl: fakes.oai.url, ...KEY },
      OPENAI_FIELDS,
    );
    expect(fakes.oai.requests[0].path).toBe('/v1/responses');
    expect(fakes.oai.requests[0].body).toMatchObject({
      prompt_cache_key: 'sess-42',
      safety_identifier: 'user-7',
    });
    expect(fakes.oai.requests[0].body).not.toHaveProperty('temperature');
  });

  it('O1/O2: /responses/compact takes the cache and tier fields only (no safety_identifier, no temperature)', async () => {
    await compactWith(
      { provider: 'openai', model: 'gpt-5.4', baseUrl: fakes.oai.url, catalogFile: catalog, ...KEY },
      { ...OPENAI_FIELDS, service_tier: 'priority' },
    );
    expect(fakes.oai.requests[0].path).toBe('/v1/responses/compact');
    expect(fakes.oai.requests[0].body).toMatchObject({
      prompt_cache_key: 'sess-42',
      service_tier: 'priority',
      prompt_cache_retention: '24h',
    });
    expect(fakes.oai.requests[0].body).not.toHaveProperty('safety_identifier');
    expect(fakes.oai.requests[0].body).not.toHaveProperty('temperature');
  });

  it('O1: the Anthropic inline request and its Local fallback carry service_tier, metadata and cache_control', async () => {
    fakes.ant.script.push({ kind: 'no-compaction' });
    await compactWith(
      { provider: 'anthropic', model: 'claude-opus-4-6', baseUrl: fakes.ant.url, ...KEY },
      ANTHROPIC_FIELDS,
    );
    expect(fakes.ant.requests).toHaveLength(2);
    for (const req of fakes.ant.requests) {
      expect(req.body).toMatchObject({
        service_tier: 'standard_only',
        metadata: { user_id: 'user-7' },
        cache_control: { type: 'ephemeral' },
      });
      expect(req.body).not.toHaveProperty('temperature');
    }
  });
});
