import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, MESSAGE_OVERHEAD, TOOL_CALL_OVERHEAD } from '#src/estimate/estimator.js';
import { charsCounter, freeEncoders, tiktokenCounter } from '#src/estimate/counters.js';
import { msg } from '#src/messages/message.js';

afterAll(freeEncoders);

describe('token estimation (T1–T2)', () => {
  it('T1: counts text with o200k_base and adds per-message and per-call overheads', () => {
    const e = createEstimator();
    expect(e.text('hello world')).toBe(2);
    expect(e.message(msg.user('hello world'))).toBe(2 + MESSAGE_OVERHEAD);
    const call = msg.assistant('', [{ id: 'c1', name: 'read', arguments: '{}' }]);
    expect(e.message(call)).toBe(MESSAGE_OVERHEAD + TOOL_CALL_OVERHEAD + e.text('read') + e.text('{}'));
  });

  it('T1: counts image and file parts as 1,000, and opaque items by their strings (visible reasoning once)', () => {
    const e = createEstimator();
    const m = msg.user([
      { type: 'image', url: 'x' },
      { type: 'file', fileId: 'f' },
      { type: 'text', text: 'hi' },
    ]);
    expect(e.message(m)).toBe(MESSAGE_OVERHEAD + 2000 + e.text('hi'));
    const thinking = { type: 'thinking', thinking: 'y'.repeat(10_000), signature: 'EqQBCkgIBxAB==' };
    const opaque = msg.assistant('', undefined, {
      reasoningDetails: [thinking, JSON.stringify({ type: 'reasoning', encrypted_content: 'gAAAAB' })],
      reasoning: thinking.thinking,
    });
    const strings = ['thinking', thinking.thinking, thinking.signature].map((t) => e.text(t));
    const encrypted = e.text(JSON.stringify({ type: 'reasoning', encrypted_content: 'gAAAAB' }));
    expect(e.message(opaque)).toBe(MESSAGE_OVERHEAD + strings.reduce((a, b) => a + b) + encrypted);
    // A native compaction marker's text stands for its block: the block is not counted again.
    const marker = msg.assistant('summary', undefined, {
      reasoningDetails: [{ type: 'compaction', content: 'summary' }],
      metadata: { nativeSummary: true },
    });
    expect(e.message(marker)).toBe(MESSAGE_OVERHEAD + e.text('summary'));
  });

  it('T1: special-token text is counted as plain text, never thrown on', () => {
    const e = createEstimator();
    expect(() => e.text('a <|endoftext|> b <|im_start|>')).not.toThrow();
    // As plain text the marker is several ordinary tokens (one special token would give 3).
    expect(e.text('a <|endoftext|> b')).toBe(9);
  });

  it('T2: a growing history re-estimates only new messages (cache by message identity)', () => {
    const e = createEstimator();
    const h = Array.from({ length: 50 }, (_, i) => msg.user(`message number ${i} `.repeat(10)));
    const first = e.history(h);
    const before = e.stats();
    h.push(msg.user('one more message, long enough to reach the text cache threshold.....'));
    const second = e.history(h);
    const after = e.stats();
    expect(second).toBeGreaterThan(first);
    expect(after.messageMisses - before.messageMisses).toBe(1);
    expect(after.messageHits - before.messageHits).toBe(50);
  });

  it('T2: a copied message with the same long text hits the text cache', () => {
    const e = createEstimator();
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
    e.message(msg.user(text));
    const before = e.stats().textHits;
    e.message(msg.user(text));
    expect(e.stats().textHits).toBe(before + 1);
  });

  it('T2: the chars fallback is ceil(UTF-8 bytes / 4) and loads no encoder', () => {
    expect(charsCounter.count('')).toBe(0);
    expect(charsCounter.count('abcd')).toBe(1);
    expect(charsCounter.count('abcde')).toBe(2);
    expect(charsCounter.count('你好')).toBe(2); // 6 bytes
    const e = createEstimator({ encoding: 'chars' });
    expect(e.encoding).toBe('chars');
    expect(e.text('abcdefgh')).toBe(2);
  });

  it('T2: each encoding counts with its own tokenizer (a swapped encoding changes these counts)', () => {
    // Texts where o200k_base and cl100k_base differ, counted by tiktoken itself.
    const texts: Array<[string, number, number]> = [
      ['Привет, мир! Как у тебя дела сегодня?', 11, 20],
      ['こんにちは、世界。今日はいい天気ですね。', 10, 17],
      ['naïve café résumé', 5, 7],
      ['a <|endoftext|> b', 9, 8],
    ];
    const o200k = createEstimator();
    const cl100k = createEstimator({ encoding: 'cl100k_base' });
    expect(o200k.encoding).toBe('o200k_base');
    expect(cl100k.encoding).toBe('cl100k_base');
    expect(texts.map(([t]) => [o200k.text(t), cl100k.text(t)])).toEqual(texts.map(([, o, c]) => [o, c]));
    expect(texts.map(([t]) => tiktokenCounter('cl100k_base').count(t))).toEqual(texts.map(([, , c]) => c));
    expect(tiktokenCounter('o200k_base').name).toBe('o200k_base');
  });
});
