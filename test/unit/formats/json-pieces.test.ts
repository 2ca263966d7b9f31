import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { corpusFiles } from '#dev/bench/corpus.js';
import { UserError } from '#src/core/errors.js';
import { exportSession, readSessionFile, type ImportResult } from '#src/formats/index.js';
import { JsonPieces, PIECES_MIN_BYTES, readJsonDocumentInPieces } from '#src/formats/json-pieces.js';
import { rawNumbersIn } from '#src/formats/raw-numbers.js';
import { expectOneLineError, fuzzParams } from '#support/fuzz.js';
import { runCli } from '#support/cli.js';
import { msg } from '#src/messages/message.js';
import { fixture, rawDir } from '#support/paths.js';

/**
 * Large JSON session files are read in pieces (bounded memory): entries of the long lists are
 * parsed one at a time and the file's text is never held whole. These tests force that path
 * on small files (`piecesFrom: 0`) and hold it to the whole-text path: same sessions, same
 * raw number texts, same errors.
 */

const dir = mkdtempSync(join(tmpdir(), 'compactor-json-pieces-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const WHOLE = { piecesFrom: Number.POSITIVE_INFINITY };
const PIECES = { piecesFrom: 0 };

/** The import of `path`, or the one-line error it ends with. */
function outcome(path: string, opts: { piecesFrom: number }): ImportResult | string {
  try {
    return readSessionFile(path, opts);
  } catch (e) {
    if (e instanceof UserError) return `error: ${e.message}`;
    throw e;
  }
}

/** Parses `text` with JsonPieces, fed in chunks cut at the given byte offsets. */
function parseInPieces(text: string, cuts: number[]): unknown {
  const bytes = Buffer.from(text);
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces = new JsonPieces();
  let from = 0;
  for (const to of [...at, bytes.length]) {
    if (to > from) pieces.write(Buffer.from(bytes.subarray(from, to)));
    from = Math.max(from, to);
  }
  return pieces.end();
}

function parsedOrError(parse: () => unknown): unknown {
  try {
    return parse();
  } catch {
    return 'error';
  }
}

const SOURCES = [
  ...['anthropic.json', 'canonical.json', 'openai-chat.json', 'openai-responses.json'].map(fixture),
  ...corpusFiles(rawDir).filter((f) => /\.json$/.test(f)),
];

describe('a JSON session file read in pieces (D2, D3)', () => {
  it('D2: every JSON corpus session and fixture imports the same sessions in pieces as read whole', () => {
    expect(SOURCES.length).toBeGreaterThan(4);
    let viaPieces = 0;
    for (const file of SOURCES) {
      if (readJsonDocumentInPieces(file, basename(file), 0) !== undefined) viaPieces++;
      expect({ file, result: outcome(file, PIECES) }).toEqual({ file, result: outcome(file, WHOLE) });
    }
    // Trajectories of formats read as JSON Lines (OpenHands) go the usual way; the rest in pieces.
    expect(viaPieces).toBeGreaterThanOrEqual(SOURCES.length - 2);
  });

  it('D2: raw number texts (1.0, 2.50, big integers) in entries and around them survive a round trip', () => {
    const text =
      '{"model":"m","temperature":1.0,"messages":[{"role":"user","content":"hi","n":2.50},' +
      '{"role":"assistant","content":"ok","usage":{"id":12345678901234567890}}],"seed":7}';
    const file = join(dir, 'numbers.json');
    writeFileSync(file, text);
    const pieces = readSessionFile(file, PIECES);
    expect(pieces).toEqual(readSessionFile(file, WHOLE));
    const s = pieces.sessions[0];
    expect(rawNumbersIn(s.messages.map((m) => m.metadata))).not.toEqual([]);
    expect(JSON.parse(exportSession(s.messages, 'openai-chat', { meta: s.meta }))).toEqual(JSON.parse(text));
    expect(exportSession(s.messages, 'openai-chat', { meta: s.meta })).toContain('2.50');
  });

  it('D3: malformed files end with the same one-line error in pieces as read whole', () => {
    const good = readFileSync(fixture('openai-chat.json'), 'utf8');
    const cases = {
      truncated: good.slice(0, good.length - 9),
      'missing comma': good.replace('},', '}'),
      'stray bracket': `${good}]`,
      'two documents': `${good}${good}`,
      'NUL byte': good.replace('"role"', '"ro\u0000le"'),
      'bad entry': good.replace('"role": "user"', '"role": 7'),
    };
    for (const [name, text] of Object.entries(cases)) {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, text);
      const r = outcome(file, PIECES);
      expect({ name, r }).toEqual({ name, r: outcome(file, WHOLE) });
      expect(r).toMatch(/^error: [^\n]+$/);
    }
    const latin1 = join(dir, 'latin1.json');
    writeFileSync(
      latin1,
      Buffer.concat([Buffer.from('[{"role":"user","content":"caf'), Buffer.from([0xe9]), Buffer.from('"}]')]),
    );
    expect(outcome(latin1, PIECES)).toEqual(outcome(latin1, WHOLE));
    expect(outcome(latin1, PIECES)).toMatch(/not valid UTF-8/);
  });

  it('D3: a second top-level value (JSON Lines) stops the scan in the chunk where it starts', () => {
    // Scanning on would parse entries of a whole JSON Lines file before it is read again whole.
    const pieces = new JsonPieces();
    expect(() => pieces.write(Buffer.from('{"type":"user","content":[{"a":1}]}\n{"type":'))).toThrow(
      /more than one JSON value/,
    );
  });

  it('D3: the size cap and the regular-file check come before any read', () => {
    expect(() => readJsonDocumentInPieces(dir, 'the-dir', 0)).toThrow(/the-dir: is a directory/);
    const file = join(dir, 'capped.json');
    writeFileSync(file, '[{"role":"user","content":"x"}]');
    expect(() => readJsonDocumentInPieces(file, 'capped.json', 0, 10)).toThrow(/larger than the .* limit/);
    expect(statSync(file).size).toBeGreaterThan(10);
  });

  it("D2: JsonPieces gives JSON.parse's value, or fails where it fails, for any chunking of mutated JSON", () => {
    const texts = SOURCES.filter((f) => statSync(f).size < 200_000).map((f) => readFileSync(f, 'utf8'));
    const edit = fc.record({
      at: fc.nat(),
      cut: fc.nat({ max: 6 }),
      put: fc.constantFrom('', '"', '\\', '[', ']', '{', '}', ',', '1.0', '\\u00e9', 'é', ' '),
    });
    fc.assert(
      fc.property(
        fc.nat({ max: texts.length - 1 }),
        fc.array(edit, { maxLength: 2 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (i, edits, cuts) => {
          const text = edits.reduce((t, e) => {
            const at = e.at % (t.length + 1);
            return t.slice(0, at) + e.put + t.slice(at + e.cut);
          }, texts[i]);
          expect(parsedOrError(() => parseInPieces(text, cuts))).toEqual(
            parsedOrError(() => JSON.parse(text)),
          );
        },
      ),
      fuzzParams(150),
    );
  });

  it('D2: escapes and multi-byte characters cut at every chunk boundary parse the same', () => {
    const text = JSON.stringify({
      messages: [{ content: 'a\\"b\\\\"é😀\n' }, ['x', { y: '\\' }], 3],
      z: [[1], '}'],
    });
    for (let cut = 0; cut <= Buffer.byteLength(text); cut++)
      expect(parseInPieces(text, [cut, cut + 1, cut + 3])).toEqual(JSON.parse(text));
  });

  it('D3: a session over the pieces threshold imports; truncated, compactor run exits 2 with one line', async () => {
    const messages = [msg.user('Read the log.')];
    for (let i = 0; i < 40; i++) messages.push(msg.assistant(`log part ${i}: ${'line é\n'.repeat(30_000)}`));
    const text = exportSession(messages, 'openai-chat');
    expect(Buffer.byteLength(text)).toBeGreaterThan(PIECES_MIN_BYTES);
    const file = join(dir, 'big.json');
    writeFileSync(file, text);
    const ok = await runCli(['import', file, '--out', join(dir, 'big.canonical.json')]);
    expect(ok.code).toBe(0);
    expect(readSessionFile(join(dir, 'big.canonical.json')).sessions[0].messages).toHaveLength(41);
    writeFileSync(file, text.slice(0, text.length - 1000));
    const bad = await runCli(['run', file]);
    expect(bad.code).toBe(2);
    expectOneLineError(bad.err);
    expect(bad.err).toMatch(/big\.json.*malformed JSON/);
  });
});
