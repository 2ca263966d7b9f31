import { describe, expect, it } from '@jest/globals';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import fc from 'fast-check';
import { rememberClientBody, upstreamBytes } from '#src/serve/client-bytes.js';

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

  it('a body changed in one place is the client bytes around it and only the change encoded', () => {
    fc.assert(
      fc.property(textArb, fc.nat(), fc.nat(), textArb, (text, at, cut, insert) => {
        const bytes = Buffer.from(text);
        const start = at % (text.length + 1);
        const body = text.slice(0, start) + insert.slice(0, 50) + text.slice(start + (cut % 8));
        const out = upstreamBytes(requestWith(bytes), body);
        expect(joined(out).equals(Buffer.from(body))).toBe(true);
        // A large body with a small change is sent in pieces, most of them the client's own.
        if (text.length > 1_000 && Array.isArray(out)) expect(out[1].length).toBeLessThan(400);
      }),
      { numRuns: 200 },
    );
  });

  it('a body with little in common with the client text is encoded whole', () => {
    const req = requestWith(Buffer.from(`{"a":"${'x'.repeat(100)}"}`));
    const body = `{"b":"${'y'.repeat(100)}"}`;
    expect(upstreamBytes(req, body)).toBe(body);
  });

  it('bytes that are not valid UTF-8 never go in pieces: the body is encoded as written', () => {
    const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const req = requestWith(bytes);
    const body = bytes.toString('utf8').replace('}', ',"b":1}');
    expect(upstreamBytes(req, body)).toBe(body);
  });

  it('a request without a remembered body sends the text', () => {
    expect(upstreamBytes(new IncomingMessage(new Socket()), '{}')).toBe('{}');
  });
});
