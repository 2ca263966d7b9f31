import { describe, expect, it } from '@jest/globals';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import fc from 'fast-check';
import { clientTextWith, rememberClientBody, upstreamBytes } from '#src/serve/client-bytes.js';

/**
 * What goes upstream is taken from the client's own bytes where the body is still the
 * client's text: the pieces always make exactly the UTF-8 of the body that was written.
 */

const requestWith = (bytes: Buffer) => {
  const req = new IncomingMessage(new Socket());
  rememberClientBody(req, bytes.toString('utf8'), bytes);
  return req;
};

const joined = (out: Buffer | Buffer[] | string) =>
  typeof out === 'string' ? Buffer.from(out) : Array.isArray(out) ? Buffer.concat(out) : out;

// Long enough that whole chunks are compared, with characters of 1 to 4 bytes (surrogate pairs too).
const textArb = fc.string({
  unit: fc.constantFrom('a', '"', '{', 'é', '中', '😀', '\\u00e9'),
  maxLength: 12_000,
});

describe('bodies sent as the client bytes', () => {
  it('sends the client bytes themselves when the body is the client text', () => {
    const bytes = Buffer.from('{"model":"m","messages":[{"role":"user","content":"héllo 😀"}]}');
    const req = requestWith(bytes);
    expect(upstreamBytes(req, bytes.toString('utf8'))).toBe(bytes);
  });

  it('the client text with an insertion goes as the client bytes around it, only the insertion encoded', () => {
    fc.assert(
      fc.property(textArb, fc.nat(), textArb, (text, n, insert) => {
        const bytes = Buffer.from(text);
        const req = requestWith(bytes);
        const own = bytes.toString('utf8');
        const at = n % (own.length + 1);
        const body = clientTextWith(req, own, at, `,${insert}`);
        expect(body).toBe(`${own.slice(0, at)},${insert}${own.slice(at)}`);
        const out = upstreamBytes(req, body);
        expect(joined(out).equals(Buffer.from(body))).toBe(true);
        // In pieces unless the place splits a surrogate pair; the client's own bytes around it.
        const splits = at > 0 && at < own.length && /[\ud800-\udbff]/.test(own[at - 1]);
        expect(Array.isArray(out)).toBe(!splits);
        if (Array.isArray(out)) expect(out[1].equals(Buffer.from(`,${insert}`))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('a text remembered in pieces gives the same insertion and the same bytes, made from the pieces', () => {
    fc.assert(
      fc.property(textArb, fc.array(fc.nat(), { maxLength: 6 }), fc.nat(), (text, cuts, n) => {
        const bytes = Buffer.from(text);
        const own = bytes.toString('utf8');
        const at = n % (own.length + 1);
        // Pieces are cut between characters (a body's are cut at its list's items).
        const between = (c: number) => (/[\udc00-\udfff]/.test(own[c] ?? '') ? c - 1 : c);
        const ends = [...new Set(cuts.map((c) => between(c % (own.length + 1))))].sort((x, y) => x - y);
        const pieces = [0, ...ends].map((start, i) => own.slice(start, [...ends, own.length][i]));
        const req = new IncomingMessage(new Socket());
        rememberClientBody(req, own, bytes, { pieces, aligned: true });
        const body = clientTextWith(req, own, at, ',"x":1');
        expect(body).toBe(`${own.slice(0, at)},"x":1${own.slice(at)}`);
        expect(joined(upstreamBytes(req, body)).equals(Buffer.from(body))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('any other body is encoded as written', () => {
    const req = requestWith(Buffer.from(`{"a":"${'x'.repeat(100)}"}`));
    const body = `{"b":"${'y'.repeat(100)}"}`;
    expect(upstreamBytes(req, body)).toBe(body);
  });

  it('D2: any other large body is encoded, byte for byte, into pages of its own (given back to the system when collected)', () => {
    const req = requestWith(Buffer.from(`{"a":"${'x'.repeat(100)}"}`));
    const body = `{"b":"${'y → 😀 '.repeat(40_000)}\ud800"}`;
    for (const r of [req, new IncomingMessage(new Socket())]) {
      const out = upstreamBytes(r, body) as Buffer;
      expect(Buffer.isBuffer(out) && out.equals(Buffer.from(body))).toBe(true);
      expect((out.buffer as ArrayBuffer & { resizable?: boolean }).resizable).toBe(true);
    }
  });

  it('bytes that are not valid UTF-8 never go in pieces: the body is encoded as written', () => {
    const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const req = requestWith(bytes);
    const own = bytes.toString('utf8');
    const body = clientTextWith(req, own, own.length - 1, ',"b":1');
    expect(upstreamBytes(req, body)).toBe(body);
    expect(upstreamBytes(req, own)).toBe(own);
  });

  it('a request without a remembered body sends the text', () => {
    expect(upstreamBytes(new IncomingMessage(new Socket()), '{}')).toBe('{}');
  });
});
