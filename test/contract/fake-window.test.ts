import { describe, expect, it } from '@jest/globals';
import { body as chatSummary } from '../fixtures/contract/chat-summary.js';
import { body as messagesInline } from '../fixtures/contract/messages-inline.js';
import { body as messagesSummary } from '../fixtures/contract/messages-summary.js';
import { body as responsesCompact } from '../fixtures/contract/responses-compact.js';
import { body as responsesSummary } from '../fixtures/contract/responses-summary.js';
import { UNCHECKED_OVERFLOW_TEST, type DeclaredWindow, type FakeServer } from '#support/fake-http.js';
import { startFakeAnthropic } from '#support/fake-anthropic.js';
import { startFakeOpenAI } from '#support/fake-openai.js';
import { estimateBodyTokens, requestedOutputTokens } from '#support/fake-window.js';

/**
 * The fake servers' declared window: every request body Compactor sends —
 * the recorded Local summary bodies of each wire, /responses/compact and the Anthropic inline
 * request (test/fixtures/contract) — is held to input + the output it asks for, whichever field
 * names it. One token over the window answers 400 and makes close() reject, which fails the test.
 */

const BETAS = 'context-management-2025-06-27,compact-2026-01-12';
const { max_tokens: chatMax, ...chatWithout } = chatSummary;
const CASES: Array<[string, 'oai' | 'ant', string, Record<string, unknown>, number]> = [
  ['Chat Completions summary (max_tokens)', 'oai', '/chat/completions', chatSummary, chatMax],
  [
    'Chat Completions summary on OpenAI (max_completion_tokens)',
    'oai',
    '/chat/completions',
    { ...chatWithout, max_completion_tokens: chatMax },
    chatMax,
  ],
  [
    'Responses summary (max_output_tokens)',
    'oai',
    '/responses',
    responsesSummary,
    responsesSummary.max_output_tokens,
  ],
  ['/responses/compact (no output field)', 'oai', '/responses/compact', responsesCompact, 0],
  [
    'Anthropic Messages summary (max_tokens)',
    'ant',
    '/messages',
    messagesSummary,
    messagesSummary.max_tokens,
  ],
  ['Anthropic inline compaction (max_tokens)', 'ant', '/messages', messagesInline, messagesInline.max_tokens],
];

function start(kind: 'oai' | 'ant', window: DeclaredWindow): Promise<FakeServer> {
  return kind === 'oai' ? startFakeOpenAI({ window }) : startFakeAnthropic({ window });
}

async function send(srv: FakeServer, path: string, body: unknown) {
  const res = await fetch(`${srv.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-beta': BETAS },
    body: JSON.stringify({ ...(body as object), stream: false }),
  });
  return { status: res.status, json: (await res.json()) as { error?: { type?: string } } };
}

describe('fake servers hold every request to the declared window (L1)', () => {
  it.each(CASES)(
    'L1: %s: input + requested output fits exactly; one token less fails',
    async (_n, kind, path, body, output) => {
      expect(requestedOutputTokens(body)).toBe(output);
      const needs = estimateBodyTokens({ ...body, stream: false }) + output;
      const fits = await start(kind, needs);
      expect((await send(fits, path, body)).status).toBe(200);
      await expect(fits.close()).resolves.toBeUndefined();

      const over = await start(kind, needs - 1);
      const r = await send(over, path, body);
      expect(r.status).toBe(400);
      expect(r.json.error?.type).toBe('fake_window_exceeded');
      expect(over.violations).toEqual([
        `fake server: /v1${path} request needs ${needs} tokens (input ${needs - output} + max output ${output}) but the declared window is ${needs - 1}`,
      ]);
      await expect(over.close()).rejects.toThrow(/declared window is/);
    },
  );

  it('L1: the named opt-out checks nothing', async () => {
    const srv = await start('oai', UNCHECKED_OVERFLOW_TEST);
    expect((await send(srv, '/chat/completions', chatSummary)).status).toBe(200);
    await expect(srv.close()).resolves.toBeUndefined();
  });
});
