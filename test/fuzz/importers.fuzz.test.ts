import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { corpusFiles } from '#dev/bench/corpus.js';
import { UserError } from '#src/core/errors.js';
import { FORMAT_NAMES, parseSession, type FormatName } from '#src/formats/index.js';
import { runCli } from '#support/cli.js';
import { fixture, rawDir } from '#support/paths.js';
import { applyTextMutation, expectOneLineError, fuzzParams, leftovers, textMutation } from '#support/fuzz.js';

/**
 * Fuzz of the importers: random mutations of real session files (the shared corpus) and
 * of the hand-made fixtures of formats the corpus lacks, through every importer. Each input
 * either imports or fails with one UserError line; never another exception, never a stack.
 */

// Corpus files up to this size keep a run in milliseconds; every importer still has sources.
const MAX_SOURCE_BYTES = 400_000;
const FIXTURES = [
  'anthropic.json',
  'canonical.json',
  'claude-code-small.jsonl',
  'codex-rollout.jsonl',
  'gemini-stream.jsonl',
  'openai-chat.json',
  'openai-chat.jsonl',
  'openai-responses.json',
];
const SOURCES = [
  ...FIXTURES.map(fixture),
  ...corpusFiles(rawDir).filter((f) => statSync(f).size <= MAX_SOURCE_BYTES),
].map((path) => ({ name: basename(path), text: readFileSync(path, 'utf8') }));

/** Imports `text`; returns 'ok' or the UserError's message. Any other throw fails the property. */
function importOutcome(text: string, name: string, from?: FormatName): string {
  try {
    const r = parseSession(text, { fileName: name, from });
    expect(Array.isArray(r.sessions)).toBe(true);
    return 'ok';
  } catch (e) {
    if (!(e instanceof UserError))
      throw new Error(`${name}: not a one-line UserError: ${String(e)}`, { cause: e });
    expectOneLineError(e.message);
    return e.message;
  }
}

/** A JSON value at a random place of a JSON document (or of one JSONL line) replaced. */
function replaceJsonValue(text: string, pick: number, value: unknown): string {
  const lines = text.split('\n');
  const whole = tryParse(text);
  const k = pick % lines.length;
  const doc = whole !== undefined ? whole : tryParse(lines[k]);
  if (doc === undefined || doc === null || typeof doc !== 'object') return text;
  const slots: Array<[Record<string, unknown> | unknown[], string | number]> = [];
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || slots.length > 5_000) return;
    for (const [key, child] of Object.entries(v)) {
      slots.push([v as Record<string, unknown>, Array.isArray(v) ? Number(key) : key]);
      walk(child);
    }
  };
  walk(doc);
  if (slots.length === 0) return text;
  const [parent, key] = slots[pick % slots.length];
  (parent as Record<string | number, unknown>)[key] = value;
  if (whole !== undefined) return JSON.stringify(doc);
  lines[k] = JSON.stringify(doc);
  return lines.join('\n');
}

function tryParse(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

const source = fc.nat({ max: SOURCES.length - 1 });
const forcedFormat = fc.option(fc.constantFrom(...FORMAT_NAMES), { nil: undefined });

const tmp = mkdtempSync(join(tmpdir(), 'compactor-fuzz-import-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('importers under random mutations of real sessions (D3)', () => {
  it('D3: every source imports unchanged (the mutations start from valid files)', () => {
    expect(SOURCES.length).toBeGreaterThan(FIXTURES.length);
    for (const s of SOURCES) expect(importOutcome(s.text, s.name)).toBe('ok');
  });

  it('D3: text edits (cuts, repeats, hostile characters, truncation) import or fail in one line', () => {
    fc.assert(
      fc.property(
        source,
        fc.array(textMutation, { minLength: 1, maxLength: 3 }),
        forcedFormat,
        (i, ms, from) => {
          const text = ms.reduce(applyTextMutation, SOURCES[i].text);
          importOutcome(text, SOURCES[i].name, from);
        },
      ),
      fuzzParams(120),
    );
  });

  it('D3: any JSON value in any place of a record imports or fails in one line', () => {
    fc.assert(
      fc.property(source, fc.nat(), fc.jsonValue({ maxDepth: 2 }), forcedFormat, (i, pick, value, from) => {
        const text = replaceJsonValue(SOURCES[i].text, pick, value);
        importOutcome(text, SOURCES[i].name, from);
      }),
      fuzzParams(150),
    );
  });

  it('D3: compactor import of a mutated file exits 0 with its output or 2 with one line and no output', async () => {
    await fc.assert(
      fc.asyncProperty(source, fc.array(textMutation, { maxLength: 2 }), async (i, ms) => {
        const dir = mkdtempSync(join(tmp, 'case-'));
        const input = SOURCES[i].name;
        writeFileSync(join(dir, input), ms.reduce(applyTextMutation, SOURCES[i].text));
        const r = await runCli(['import', input, '--out', 'out.json'], { cwd: dir });
        expect([0, 2]).toContain(r.code);
        if (r.code === 0) expect(readdirSync(dir)).toContain('out.json');
        else {
          expectOneLineError(r.err);
          expect(leftovers(dir, [input])).toEqual([]);
        }
      }),
      fuzzParams(25),
    );
  });
});
