import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/counters.js';
import { fixture, rawDir } from '#support/paths.js';
import { runCli } from '#support/cli-in-dir.js';
import { runCompiledCli } from '#support/compiled-cli.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

afterAll(freeEncoders);
const dir = mkdtempSync(join(tmpdir(), 'compactor-import-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('compactor import (D2, D3)', () => {
  it('D2: a transcript converts to canonical on stdout by default', async () => {
    const r = await runCli(
      ['import', join(rawDir, 'SWE-agent__SWE-agent/gpt4__pydicom__pydicom-1458.traj')],
      dir,
    );
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { format: string; messages: unknown[] };
    expect(doc.format).toBe('compactor.canonical');
    expect(doc.messages).toHaveLength(26);
  });

  it('D2: --to anthropic --out writes atomically and --json reports format, sessions and counts', async () => {
    const out = join(dir, 'claude.json');
    const file = join(rawDir, 'd-kimuson__claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl');
    const r = await runCli(['import', file, '--to', 'anthropic', '--out', out, '--json'], dir);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as Record<string, unknown>;
    expect(report).toMatchObject({ format: 'claude-code', to: 'anthropic', out });
    expect(report.sessions).toEqual([
      {
        id: '1af7fc5e-8455-4414-9ccd-011d40f70b2a',
        messages: 21,
        toolCalls: 12,
        toolResults: 12,
        sidechain: false,
      },
    ]);
    const doc = JSON.parse(readFileSync(out, 'utf8')) as {
      messages: Array<{ role: string; content: unknown }>;
    };
    // The five parallel Glob/Bash results travel together in one user message.
    const five = doc.messages.find(
      (m) => Array.isArray(m.content) && m.content.length === 5 && m.role === 'user',
    );
    expect(five?.content).toEqual(
      Array.from({ length: 5 }, () => expect.objectContaining({ type: 'tool_result' })),
    );
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('D2: a provider file exports to itself by default, unknown fields intact', async () => {
    const r = await runCli(['import', fixture('openai-responses.json')], dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual(JSON.parse(readFileSync(fixture('openai-responses.json'), 'utf8')));
  });

  it('D2: --session picks a session by index; an unknown one lists what exists', async () => {
    const file = join(rawDir, 'All-Hands-AI__OpenHands/resolver__mock_output__output.jsonl');
    const ok = await runCli(['import', file, '--session', '0', '--to', 'openai-chat', '--json'], dir);
    expect(JSON.parse(ok.out)).toMatchObject({ session: 'neubig/pr-viewer#5', to: 'openai-chat' });
    const bad = await runCli(['import', file, '--session', 'nope'], dir);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(
      /^compactor: .*output\.jsonl: no session 'nope' \(2 sessions: 0:neubig\/pr-viewer#5, 1:/,
    );
  });

  it.each([
    [
      'malformed JSONL',
      'bad.jsonl',
      '{"role":"user","content":"a"}\n{"role":\n',
      /bad\.jsonl: line 2: truncated or malformed JSON/,
    ],
    ['unknown format', 'notes.txt', 'just some notes\n', /notes\.txt: unknown format/],
    ['binary garbage', 'g.bin', '\u0000\u0001\u0002', /g\.bin: binary data/],
    [
      'wrong field type',
      'w.json',
      '{"messages":[{"role":"user","content":[{"type":"text","text":3}]}]}',
      /w\.json: messages\[0\]\.content\[0\]\.text: /,
    ],
  ])(
    'D3: %s → one line naming the file, exit 2, no stack, no output file',
    async (_label, name, body, pattern) => {
      writeFileSync(join(dir, name), body);
      const out = join(dir, `${name}.out`);
      const r = await runCli(['import', name, '--out', out], dir);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(pattern);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).not.toMatch(/\bat .*\.ts:\d+/);
      expect(r.out).toBe('');
      expect(existsSync(out)).toBe(false);
    },
  );

  it('D3: flag errors are one line too (bad --from, bad --to, missing FILE)', async () => {
    const f = fixture('openai-chat.jsonl');
    expect((await runCli(['import', f, '--from', 'word'], dir)).err).toMatch(/unknown format 'word'/);
    expect((await runCli(['import', f, '--to', 'xml'], dir)).err).toMatch(/unknown export format 'xml'/);
    const missing = await runCli(['import'], dir);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/missing FILE/);
  });

  it('D3: a child process gets exit code 2 and a one-line error (node dist/src/bin/compactor.js)', async () => {
    const bad = join(dir, 'child.json');
    writeFileSync(bad, '{"messages": [');
    // Waits for the exit however long a busy machine takes to start the process.
    const r = await runCompiledCli(['import', bad], {
      cwd: dir,
      env: { ...process.env, COMPACTOR_DEBUG: '' },
    });
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^compactor: .*child\.json: malformed JSON/);
  });
});
