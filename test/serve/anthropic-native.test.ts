import { describe, expect, it } from '@jest/globals';
import type { Message } from '#src/messages/message.js';
import { parseRequest, writeRequest } from '#src/serve/protocols.js';
import { replayingBody, replayingRequest, withBetas } from '#src/serve/anthropic-native.js';

const block = { type: 'compaction', content: '## Goal\nRead every file.', encrypted_content: null };
const marker: Message = {
  role: 'assistant',
  content: block.content,
  reasoningDetails: [block],
  metadata: { nativeSummary: true },
};

/** A client's Messages request, read as the proxy reads it. */
const clientRequest = (extra: Record<string, unknown> = {}) =>
  parseRequest(
    'anthropic',
    JSON.stringify({
      model: 'claude-sonnet-4-6',
      max_tokens: 512,
      messages: [{ role: 'user', content: 'Read every file.' }],
      ...extra,
    }),
  );

describe('compactor serve: replaying an Anthropic compaction block', () => {
  it("C3: the compaction beta joins the client's own betas, once", () => {
    const headers = { 'anthropic-beta': 'token-efficient-tools-2025-02-19', 'x-api-key': 'k' };
    expect(withBetas(headers, ['compact-2026-01-12'])['anthropic-beta']).toBe(
      'token-efficient-tools-2025-02-19,compact-2026-01-12',
    );
    const twice = withBetas(withBetas(headers, ['compact-2026-01-12']), ['compact-2026-01-12']);
    expect(twice['anthropic-beta']).toBe('token-efficient-tools-2025-02-19,compact-2026-01-12');
    expect(withBetas({}, ['compact-2026-01-12'])).toEqual({ 'anthropic-beta': 'compact-2026-01-12' });
  });

  it('C3: the forwarded request sends the block alone, first, and declares the compact edit above the window', () => {
    const parsed = clientRequest();
    const tail: Message = { role: 'user', content: 'Go on.' };
    const sent = replayingRequest([marker, tail], parsed.meta, 16_000);
    const body = JSON.parse(writeRequest({ ...parsed, meta: sent.meta }, sent.messages));
    expect(body.messages[0]).toEqual({ role: 'assistant', content: [block] });
    // The API's floor for the trigger is 50,000 tokens: a smaller window declares the floor.
    expect(body.context_management).toEqual({
      edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 50_000 } }],
    });
    const wide = replayingRequest([marker, tail], parsed.meta, 200_000);
    expect(
      JSON.parse(writeRequest({ ...parsed, meta: wide.meta }, wide.messages)).context_management,
    ).toEqual({
      edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 200_000 } }],
    });
  });

  it("C3: the client's own context edits are kept; a compact edit it already declares is not added twice", () => {
    const clearing = { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 30_000 } };
    const own = clientRequest({ context_management: { edits: [clearing] } });
    const sent = replayingRequest([marker], own.meta, 16_000);
    const body = JSON.parse(writeRequest({ ...own, meta: sent.meta }, sent.messages));
    expect(body.context_management.edits).toEqual([
      clearing,
      { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 50_000 } },
    ]);
    const compact = { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 150_000 } };
    const declared = clientRequest({ context_management: { edits: [compact] } });
    const kept = replayingRequest([marker], declared.meta, 16_000);
    const keptBody = JSON.parse(writeRequest({ ...declared, meta: kept.meta }, kept.messages));
    expect(keptBody.context_management.edits).toEqual([compact]);
  });

  it('C3: a summary request declares the edit only when it sends a compaction block', () => {
    const plain = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    expect(replayingBody(plain, 16_000)).toBe(plain);
    const replaying = { model: 'm', messages: [{ role: 'assistant', content: [block] }] };
    expect(replayingBody(replaying, 16_000)).toMatchObject({
      context_management: { edits: [{ type: 'compact_20260112' }] },
    });
  });
});
