import { describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { detectFormat, type FormatName } from '#src/formats/index.js';
import { UserError } from '#src/core/errors.js';
import { fixture, rawDir } from '#support/paths.js';

const byFolder: Record<string, FormatName> = {
  'AFI-Protocol__afi-core': 'aider',
  'Aider-AI__aider': 'aider',
  'All-Hands-AI__OpenHands': 'openhands',
  'SWE-agent__SWE-agent': 'swe-agent',
  'd-kimuson__claude-code-viewer': 'claude-code',
  'gruckion__mini-swe-agent': 'mini-swe-agent',
};

describe('format detection (D2)', () => {
  it.each(Object.entries(byFolder))('D2: every file in %s is detected as %s', (folder, format) => {
    for (const f of readdirSync(join(rawDir, folder)))
      expect(detectFormat(readFileSync(join(rawDir, folder, f), 'utf8'), f)).toBe(format);
  });

  it.each([
    ['openai-chat.json', 'openai-chat'],
    ['openai-chat.jsonl', 'openai-chat'],
    ['openai-responses.json', 'openai-responses'],
    ['anthropic.json', 'anthropic'],
    ['canonical.json', 'canonical'],
    ['codex-rollout.jsonl', 'codex'],
    ['gemini-stream.jsonl', 'gemini-cli'],
    ['claude-code-small.jsonl', 'claude-code'],
  ])('D2: fixture %s is detected as %s', (name, format) => {
    expect(detectFormat(readFileSync(fixture(name), 'utf8'), name)).toBe(format);
  });

  it('D2: content decides, not the extension; small inline documents', () => {
    expect(detectFormat('[{"role":"user","content":"hi"}]')).toBe('openai-chat');
    expect(detectFormat('{"system":"s","messages":[{"role":"user","content":"hi"}]}')).toBe('anthropic');
    expect(detectFormat('[{"type":"function_call","call_id":"c","name":"n","arguments":"{}"}]')).toBe(
      'openai-responses',
    );
    expect(detectFormat('{"input":[]}')).toBe('openai-responses');
  });

  it.each([
    ['plain prose', 'hello there, this is not a session'],
    ['an unrelated JSON object', '{"name":"package","version":"1.0.0"}'],
    ['empty input', '   \n'],
  ])('D3: %s is an unknown format, a one-line UserError', (_label, text) => {
    expect(() => detectFormat(text, 'x.txt')).toThrow(UserError);
    try {
      detectFormat(text, 'x.txt');
    } catch (e) {
      expect((e as Error).message).toMatch(/^x\.txt: /);
      expect((e as Error).message).not.toContain('\n');
    }
  });
});
