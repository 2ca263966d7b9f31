import { describe, expect, it } from '@jest/globals';
import { command as importCommand } from '#src/cli/commands/import.js';
import { detectIn, type Detectable } from '#src/formats/detect.js';
import { detectFormat, FORMAT_NAMES, formatNamed } from '#src/formats/registry.js';

// Each importer brings its own detection rules; detect.ts only runs them. These tests use
// formats made up here, so they show what adding an importer takes: its rules and nothing else.
const jsonl = (...values: unknown[]) => values.map((v) => JSON.stringify(v)).join('\n');

describe('importers register their own detection (D2)', () => {
  it('every registered format has an importer and at least one detection rule', () => {
    for (const name of FORMAT_NAMES) {
      const format = formatNamed(name);
      expect(format.name).toBe(name);
      expect(typeof format.import).toBe('function');
      expect(format.detect.length).toBeGreaterThan(0);
    }
  });

  it('`compactor import --help` lists the registered formats, in their order', () => {
    const listed = /--from FORMAT\s+([\s\S]*?)\n\s+--to/.exec(importCommand.help)?.[1];
    expect(listed?.split(/,\s+/)).toEqual([...FORMAT_NAMES]);
  });

  it('a format known only by its own line rule is detected from its JSON Lines', () => {
    const toy: Detectable = {
      name: 'toy-log',
      detect: [{ kind: 'line', order: 5, test: (v) => (v as { toy?: unknown }).toy === 1 }],
    };
    const text = jsonl({ other: true }, { toy: 1 });
    expect(detectIn([toy], text)).toBe('toy-log');
    expect(() => detectIn([], text)).toThrow(/unknown format/);
  });

  it('rules of one kind run by their order, not by the position of their format in the list', () => {
    const doc = { messages: [] };
    const late: Detectable = { name: 'late', detect: [{ kind: 'document', order: 90, test: () => true }] };
    const early: Detectable = {
      name: 'early',
      detect: [{ kind: 'document', order: 1, test: (d) => typeof d === 'object' }],
    };
    expect(detectIn([late, early], JSON.stringify(doc))).toBe('early');
    expect(detectIn([early, late], JSON.stringify(doc))).toBe('early');
  });

  it('text rules run before any JSON is read; document rules before line rules', () => {
    const byText: Detectable = {
      name: 'by-text',
      detect: [{ kind: 'text', order: 50, test: (t) => t.includes('"marker"') }],
    };
    const byDoc: Detectable = { name: 'by-doc', detect: [{ kind: 'document', order: 1, test: () => true }] };
    const byLine: Detectable = { name: 'by-line', detect: [{ kind: 'line', order: 0, test: () => true }] };
    expect(detectIn([byDoc, byLine, byText], '{"marker": 1}')).toBe('by-text');
    expect(detectIn([byLine, byDoc], '{"a": 1}')).toBe('by-doc');
    // A one-line JSONL file is one document too: with no document rule matching, lines decide.
    expect(detectIn([byLine], '{"a": 1}')).toBe('by-line');
  });

  it('the bundled rules keep their precedence: a SWE-agent history with a task is not OpenHands', () => {
    const both = { history: [], trajectory: [], instance_id: 'x' };
    expect(detectFormat(JSON.stringify(both))).toBe('swe-agent');
    expect(detectFormat(JSON.stringify({ history: [], instance_id: 'x' }))).toBe('openhands');
    expect(detectFormat(jsonl({ type: 'message' }, { role: 'user', content: 'hi' }))).toBe('openai-chat');
  });
});
