import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { msg } from '#src/messages/message.js';
import { toAnthropicConversation } from '#src/providers/anthropic/convert.js';
import { PROVIDER_PRESETS } from '#src/providers/catalog-data.js';
import { loadCatalogFile, resolveRoute } from '#src/providers/catalog.js';
import { toChatMessages } from '#src/providers/chat/dialect.js';
import { DIALECTS, nativeDialectFor, WIRE_APIS } from '#src/providers/dialects.js';
import { createProviderClients } from '#src/providers/clients.js';
import { toResponsesInput } from '#src/providers/openai-responses/convert.js';

// Each wire dialect is one object the catalog points at by its `wire` name; these tests hold the
// registry, the catalog and the factory to that, without a server (the wire tests cover bytes).
const catalogFile = (body: unknown) => {
  const path = join(mkdtempSync(join(tmpdir(), 'compactor-dialects-')), 'catalog.json');
  writeFileSync(path, JSON.stringify(body));
  return path;
};

describe('providers by dialect (S1)', () => {
  it('every bundled provider speaks a registered dialect', () => {
    for (const [name, preset] of Object.entries(PROVIDER_PRESETS))
      expect([name, WIRE_APIS.includes(preset.wire)]).toEqual([name, true]);
  });

  it('a catalog file may pick any registered wire and no other', () => {
    for (const wire of WIRE_APIS)
      expect(loadCatalogFile(catalogFile({ providers: { vllm: { wire } } })).providers?.vllm?.wire).toBe(
        wire,
      );
    expect(() => loadCatalogFile(catalogFile({ providers: { vllm: { wire: 'soap' } } }))).toThrow(
      /invalid catalog field providers\.vllm\.wire/,
    );
  });

  it('each dialect converts history with its own wire converter', () => {
    const history = [msg.system('SYS'), msg.user('Run the tests.'), msg.assistant('They pass.')];
    expect(DIALECTS.chat.convert(history)).toEqual(toChatMessages(history));
    expect(DIALECTS.responses.convert(history)).toEqual(toResponsesInput(history));
    expect(DIALECTS.messages.convert(history)).toEqual(toAnthropicConversation(history));
  });

  it('every native rule in the catalog names a strategy a registered dialect serves', () => {
    const rules = Object.entries(PROVIDER_PRESETS).flatMap(([name, p]) =>
      p.native ? [[name, p.native] as const] : [],
    );
    expect(rules.map(([name]) => name).sort()).toEqual([
      'anthropic',
      'openai',
      'openresponses',
      'vercel',
      'xai',
    ]);
    for (const [name, rule] of rules)
      expect([name, nativeDialectFor(rule.strategy)?.native?.strategy]).toEqual([name, rule.strategy]);
  });

  it('the native client comes from the dialect serving the strategy, not from the summary wire', () => {
    expect(nativeDialectFor('nativeStandalone')).toBe(DIALECTS.responses);
    expect(nativeDialectFor('nativeInline')).toBe(DIALECTS.messages);
    expect(nativeDialectFor('local')).toBeUndefined();
    // xAI summarizes over Chat and compacts over /responses/compact.
    const xai = resolveRoute({ provider: 'xai', model: 'grok-4' }, { XAI_API_KEY: 'k' });
    expect(xai.wire).toBe('chat');
    const clients = createProviderClients(xai);
    expect(clients.strategy.kind).toBe('nativeStandalone');
    expect(clients.standalone).toBeDefined();
    expect(clients.inline).toBeUndefined();
    const claude = createProviderClients(
      resolveRoute({ provider: 'anthropic', model: 'claude-opus-4-6' }, { ANTHROPIC_API_KEY: 'k' }),
    );
    expect([claude.strategy.kind, claude.inline !== undefined, claude.standalone]).toEqual([
      'nativeInline',
      true,
      undefined,
    ]);
  });
});
