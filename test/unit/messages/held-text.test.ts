import { describe, expect, it } from '@jest/globals';
import { heldMessage, isHeld, HOLD_MIN_LENGTH, textStartsWith } from '#src/messages/held-text.js';
import { msg, MessageSchema, type Message } from '#src/messages/message.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { charsCounter } from '#src/estimate/counters.js';

// Source-like text with a few characters above U+00FF (V8 would keep it at two bytes a character).
const wide = (n: number, tag = '') =>
  `${tag}// reads the file → returns its lines — “quoted” 🙂\n${'const x = 1;\n'.repeat(n)}`.slice(0, 13 * n);

describe('held texts', () => {
  it('D1: a long text with wide characters is held as bytes and reads, prints and copies as the same message', () => {
    const original = msg.tool('call_1', wide(200), 'read_file', { metadata: { at: 1 } });
    const held = heldMessage(original);
    expect(held).not.toBe(original);
    expect(isHeld(held, 'content')).toBe(true);
    expect(held.content).toBe(original.content);
    // Same keys in the same order: JSON (and every hash over it) is byte for byte the same.
    expect(JSON.stringify(held)).toBe(JSON.stringify(original));
    expect(Object.keys(held)).toEqual(Object.keys(original));
    expect({ ...held }).toEqual(original);
    expect(structuredClone(held)).toEqual(original);
    expect(MessageSchema.parse(held)).toEqual(original);
  });

  it('D1: text parts, tool call arguments and reasoning are held; what gains nothing stays the same object', () => {
    const args = JSON.stringify({ path: 'a.ts', content: wide(100) });
    const m: Message = {
      role: 'assistant',
      content: [
        { type: 'text', text: wide(100) },
        { type: 'text', text: 'short → text' },
      ],
      toolCalls: [
        { id: 'c1', name: 'write', arguments: args },
        { id: 'c2', name: 'read', arguments: '{"path":"b.ts"}' },
      ],
      reasoning: wide(80),
    };
    const held = heldMessage(m);
    expect(JSON.stringify(held)).toBe(JSON.stringify(m));
    const parts = held.content as Array<{ type: 'text'; text: string }>;
    expect(isHeld(parts[0]!, 'text')).toBe(true);
    expect(parts[1]).toBe((m.content as unknown[])[1]);
    expect(isHeld(held.toolCalls![0]!, 'arguments')).toBe(true);
    expect(held.toolCalls![1]).toBe(m.toolCalls![1]);
    expect(isHeld(held, 'reasoning')).toBe(true);
    // Short texts, and long ones V8 keeps at one byte a character already, are left alone.
    const ascii = msg.user('plain ascii text '.repeat(HOLD_MIN_LENGTH));
    expect(heldMessage(ascii)).toBe(ascii);
    const latin1 = msg.user('café crème '.repeat(HOLD_MIN_LENGTH));
    expect(heldMessage(latin1)).toBe(latin1);
    const short = msg.user('→'.repeat(HOLD_MIN_LENGTH - 1));
    expect(heldMessage(short)).toBe(short);
    // Text that is mostly CJK takes 3 bytes a character in UTF-8, more than V8's two.
    const cjk = msg.user('読み込んだファイルの内容 '.repeat(HOLD_MIN_LENGTH));
    expect(heldMessage(cjk)).toBe(cjk);
  });

  it('D1: a long text with a lone surrogate stays as it is: UTF-8 would give it back as U+FFFD, another text in every request', () => {
    // A tool result cut inside an emoji keeps the pair's first half; one that starts inside
    // one keeps the second half. Both are strings JavaScript can send (JSON escapes them).
    for (const text of [`${wide(200)}\ud83d`, `\ude42${wide(200)}`, `${wide(100)}\ud83d x ${wide(100)}`]) {
      const original = msg.tool('call_1', text);
      const held = heldMessage(original);
      expect(held.content).toBe(text);
      expect(JSON.stringify(held)).toBe(JSON.stringify(original));
      expect(isHeld(held, 'content')).toBe(false);
    }
    // The same text without the lone half is held.
    expect(isHeld(heldMessage(msg.tool('call_1', wide(200))), 'content')).toBe(true);
  });

  it('D1: a held text written anew becomes a plain property again', () => {
    const held = heldMessage(msg.user(wide(200))) as { content: string };
    held.content = 'replaced';
    expect(held.content).toBe('replaced');
    expect(isHeld(held, 'content')).toBe(false);
    expect(JSON.stringify(held)).toBe('{"role":"user","content":"replaced"}');
  });

  it('D1: textStartsWith reads a held text, a plain one and text parts alike, up to a cut in a character', () => {
    // The prefix's last unit is half of a surrogate pair: the bytes read must still hold it.
    const text = `${'→'.repeat(10)}🙂${wide(100)}`;
    const held = heldMessage(msg.tool('c', text));
    expect(isHeld(held, 'content')).toBe(true);
    for (const m of [
      held,
      msg.tool('c', text),
      msg.tool('c', [
        { type: 'text', text: text.slice(0, 5) },
        { type: 'text', text: text.slice(5) },
      ]),
    ]) {
      expect(textStartsWith(m, text.slice(0, 11))).toBe(true);
      expect(textStartsWith(m, text.slice(0, 12))).toBe(true);
      expect(textStartsWith(m, text.slice(0, 40))).toBe(true);
      expect(textStartsWith(m, `${text.slice(0, 39)}x`)).toBe(false);
      expect(textStartsWith(m, 'x')).toBe(false);
    }
    expect(textStartsWith(msg.tool('c', 'ab'), 'abc')).toBe(false);
  });

  it('T2: the estimator counts a held message as the message it was made from, and a copy of a long text from its cache', () => {
    const e = createEstimator({ counter: charsCounter });
    const original = msg.tool('c', wide(300, 'one'));
    expect(e.message(heldMessage(original))).toBe(e.message(original));
    const hits = e.stats().textHits;
    // A long text is found again by its digest, not by its object.
    e.text(`${wide(300, 'one')}`.slice(0));
    expect(e.stats().textHits).toBe(hits + 1);
    e.text(wide(300, 'two'));
    expect(e.stats().textHits).toBe(hits + 1);
  });
});
