import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { readBody } from '#src/serve/http-io.js';
import { ParseAsItArrives } from '#src/serve/sliced-parse.js';
import { readParsed } from '#src/serve/compacting.js';
import { writeRequest } from '#src/serve/protocols.js';

/**
 * A request body is gathered as it arrives: into one buffer of the declared size when the client
 * declares one, in chunks otherwise, and each piece is handed on as it comes (the proxy parses a
 * large body meanwhile). Whatever the path, the bytes are the client's, exactly.
 */

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
});

interface Read {
  bytes: Buffer;
  pieces: Buffer[];
}

/** A server that reads each body with readBody and hands what it read to the test. */
async function reader(onPiece: (piece: Buffer, total: number) => void = () => undefined) {
  const reads: Array<Promise<Read>> = [];
  let next!: (r: Promise<Read>) => void;
  const server = createServer((req: IncomingMessage, res) => {
    const pieces: Buffer[] = [];
    let total = 0;
    const read = readBody(req, 64 * 1024 * 1024, (piece) => {
      // Copied: a piece is only lent to the sink.
      pieces.push(Buffer.from(piece));
      total += piece.length;
      onPiece(piece, total);
    }).then((bytes) => ({ bytes: Buffer.from(bytes), pieces }));
    next(read);
    void read.then(
      () => res.end('ok'),
      () => res.end('failed'),
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const post = (parts: Buffer[], headers: Record<string, string | number>, between?: Promise<unknown>) => {
    reads.push(new Promise((resolve) => (next = resolve)).then((r) => r as Read));
    const answered = new Promise<void>((resolve, reject) => {
      const req = httpRequest({ port, host: '127.0.0.1', method: 'POST', agent: false, headers }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      void (async () => {
        req.write(parts[0]!);
        if (between) await between;
        for (const p of parts.slice(1)) req.write(p);
        req.end();
      })();
    });
    return { read: () => reads.at(-1)!, answered };
  };
  return { post };
}

/** Bytes of every width of UTF-8 (surrogate pairs too), some invalid ones, and plain ASCII. */
function mixedBytes(size: number): Buffer {
  const unit = Buffer.concat([
    Buffer.from('{"a":"plain text → “quoted” — 😀 𝄞 é",'),
    Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82, 0xf0, 0x9f]),
    Buffer.from('"b":[1.0,2.50]}\n'),
  ]);
  return Buffer.concat(Array.from({ length: Math.ceil(size / unit.length) }, () => unit)).subarray(0, size);
}

const bigger = (a: Buffer, n: number) => Buffer.concat(Array.from({ length: n }, () => a));

describe('serve: a request body gathered as it arrives', () => {
  it.each([
    ['with a declared length', 300_000, true],
    ['with a declared length above what is set aside before it arrives', 5 * 1024 * 1024, true],
    ['sent in chunks, with no length', 300_000, false],
  ])(
    '%s: the bytes read are the bytes sent, and the pieces handed on add up to them',
    async (_, size, declared) => {
      const { post } = await reader();
      const sent = mixedBytes(size);
      const parts = [sent.subarray(0, 1_000), sent.subarray(1_000, 200_000), sent.subarray(200_000)];
      const headers: Record<string, string | number> = declared
        ? { 'content-length': sent.length }
        : { 'transfer-encoding': 'chunked' };
      const { read, answered } = post(parts, headers);
      const got = await read();
      await answered;
      expect(got.bytes.equals(sent)).toBe(true);
      expect(Buffer.concat(got.pieces).equals(sent)).toBe(true);
    },
  );

  it('a gzip body: the decoded bytes, and the pieces handed on are decoded ones', async () => {
    const { post } = await reader();
    const plain = mixedBytes(400_000);
    const zipped = gzipSync(plain);
    const { read, answered } = post([zipped.subarray(0, 100), zipped.subarray(100)], {
      'content-length': zipped.length,
      'content-encoding': 'gzip',
    });
    const got = await read();
    await answered;
    expect(got.bytes.equals(plain)).toBe(true);
    expect(Buffer.concat(got.pieces).equals(plain)).toBe(true);
  });

  it('the pieces are handed on while the body arrives, not once it has ended', async () => {
    let firstSeen!: () => void;
    const seen = new Promise<void>((resolve) => (firstSeen = resolve));
    const { post } = await reader((_, total) => {
      if (total >= 50_000) firstSeen();
    });
    const sent = mixedBytes(120_000);
    // The rest is sent only once the server has handed on the first part: with pieces handed
    // on only at the end, this request would never finish.
    const { read, answered } = post(
      [sent.subarray(0, 60_000), sent.subarray(60_000)],
      {
        'content-length': sent.length,
      },
      seen,
    );
    const got = await read();
    await answered;
    expect(got.bytes.equals(sent)).toBe(true);
  });
});

describe('serve: where a body read is held', () => {
  /** The buffer readBody gives for a body of `size` bytes, as it gives it (not copied). */
  async function bufferRead(size: number, declared: boolean): Promise<Buffer> {
    let got!: (b: Buffer) => void;
    const read = new Promise<Buffer>((resolve) => (got = resolve));
    const server = createServer((req, res) => {
      void readBody(req, 64 * 1024 * 1024).then((b) => (got(b), res.end('ok')));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const sent = mixedBytes(size);
    await new Promise<void>((resolve, reject) => {
      const headers = declared ? { 'content-length': size } : { 'transfer-encoding': 'chunked' };
      const req = httpRequest({ port, host: '127.0.0.1', method: 'POST', agent: false, headers }, (res) =>
        res.resume().on('end', resolve),
      );
      req.on('error', reject);
      req.end(sent);
    });
    const bytes = await read;
    expect(bytes.equals(sent)).toBe(true);
    return bytes;
  }
  const ownPages = (b: Buffer) => (b.buffer as ArrayBuffer & { resizable?: boolean }).resizable === true;

  // Pages the engine maps for the body alone go back to the system when it is collected; the C
  // allocator kept the freed bodies of past requests resident.
  it.each([
    ['with a declared length', true],
    ['sent in chunks, with no length', false],
  ])('a large body %s is held in pages of its own, a small one by the allocator', async (_, declared) => {
    expect(ownPages(await bufferRead(300_000, declared))).toBe(true);
    expect(ownPages(await bufferRead(2_000, declared))).toBe(false);
  });
});

describe('serve: a large body parsed as it arrives', () => {
  const doc = {
    model: 'gpt-4o',
    temperature: 1,
    messages: [
      { role: 'user', content: 'wide “text” → 😀 𝄞 — and é' },
      { role: 'tool', content: 'x'.repeat(3_000), extra: [true, null, -0.5, { nested: ['\\"\u0001'] }] },
    ],
  };
  const text = JSON.stringify(doc);
  const bytes = Buffer.from(text);

  it('gives what JSON.parse gives, however the bytes are cut (inside characters, escapes, surrogate pairs)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 4_000 }), { minLength: 1, maxLength: 30 }), (cuts) => {
        const parse = new ParseAsItArrives();
        let at = 0;
        for (const n of cuts) {
          parse.write(bytes.subarray(at, at + n));
          at += n;
        }
        parse.write(bytes.subarray(at));
        expect(parse.end()).toEqual(doc);
      }),
      { numRuns: 200 },
    );
  });

  it('gives undefined for invalid UTF-8, a truncated document or two documents (the text is then parsed whole)', () => {
    const cases = [
      Buffer.concat([bytes.subarray(0, 40), Buffer.from([0xff]), bytes.subarray(40)]),
      bytes.subarray(0, bytes.length - 3),
      bigger(bytes, 2),
    ];
    for (const c of cases) {
      const parse = new ParseAsItArrives();
      parse.write(c.subarray(0, 17));
      parse.write(c.subarray(17));
      expect(parse.end()).toBeUndefined();
    }
  });
});

/** A server that reads each body as the proxy does and hands the test what it made of it. */
async function parsedBy(body: Buffer) {
  let made!: (r: Awaited<ReturnType<typeof readParsed>> | Error) => void;
  const result = new Promise<Awaited<ReturnType<typeof readParsed>> | Error>((resolve) => (made = resolve));
  const server = createServer((req, res) => {
    void readParsed(req, 'openai-chat', 64 * 1024 * 1024).then(
      (r) => (made(r), res.end('ok')),
      (e: Error) => (made(e), res.end('refused')),
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      { port, host: '127.0.0.1', method: 'POST', agent: false, headers: { 'content-length': body.length } },
      (res) => res.resume().on('end', resolve),
    );
    req.on('error', reject);
    req.end(body);
  });
  return result;
}

describe('serve: a request body of 1 MiB or more, parsed as it arrives', () => {
  const pad = 'y'.repeat(1_100_000);
  const request = (extra: string) =>
    `{"model":"gpt-4o","temperature":1.0,"messages":[{"role":"user","content":"${pad}"},{"role":"user","content":"wide → 😀 é","x":2.50}${extra}]}`;

  it('D2: gives the request the text gives, wide characters and number texts exact (1.0 stays 1.0)', async () => {
    const r = await parsedBy(Buffer.from(request('')));
    if (r instanceof Error) throw r;
    expect(r.parsed.messages.at(-1)).toMatchObject({ content: 'wide → 😀 é' });
    const written = writeRequest(r.parsed, r.parsed.messages);
    expect(written).toContain('"temperature": 1.0');
    expect(written).toContain('"x": 2.50');
  });

  it('still refuses a body nested too deep, and reads one with invalid UTF-8 as its text says', async () => {
    const deep = await parsedBy(
      Buffer.from(request(`,{"role":"user","content":${'['.repeat(600)}${']'.repeat(600)}}`)),
    );
    expect(deep).toBeInstanceOf(Error);
    expect(String(deep)).toMatch(/nests deeper than 512 levels/);
    const text = Buffer.from(request(''));
    const at = text.indexOf('wide');
    const invalid = Buffer.concat([text.subarray(0, at), Buffer.from([0xff]), text.subarray(at)]);
    const r = await parsedBy(invalid);
    if (r instanceof Error) throw r;
    expect(r.parsed.messages.at(-1)).toMatchObject({ content: '\ufffdwide → 😀 é' });
  });
});
