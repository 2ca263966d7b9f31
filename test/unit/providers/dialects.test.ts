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

describe('provider tools in a summary request', () => {
  const fn = { name: 'read_file', parameters: { type: 'object' } };
  const webSearch = { type: 'web_search', search_context_size: 'low' };
  const tools = [fn, { name: 'web_search', native: { wire: 'responses' as const, tool: webSearch } }];
  const route = { kind: 'openai', maxOutputTokens: 1_000 } as Parameters<typeof DIALECTS.chat.body>[0];
  const request = { model: 'gpt-5', messages: [msg.user('Go.')], instructions: 'Summarize.', tools };

  it('N1: a provider tool goes out as it was written on its own wire, never as a function', () => {
    const body = DIALECTS.responses.body(route, request, false) as { tools: unknown[] };
    expect(body.tools).toEqual([expect.objectContaining({ type: 'function', name: 'read_file' }), webSearch]);
  });

  it('N1: on another wire it is left out, and a list left empty is not sent', () => {
    const chat = DIALECTS.chat.body(route, request, false) as {
      tools: Array<{ function: { name: string } }>;
    };
    expect(chat.tools.map((t) => t.function.name)).toEqual(['read_file']);
    const onlyNative = { ...request, tools: tools.slice(1) };
    expect(DIALECTS.messages.body(route, onlyNative, false)).not.toHaveProperty('tools');
    expect(DIALECTS.messages.body(route, onlyNative, false)).not.toHaveProperty('tool_choice');
  });
});
