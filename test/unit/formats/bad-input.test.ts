import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSession, readSessionFile } from '#src/formats/index.js';
import { UserError } from '#src/core/errors.js';
import { fixture, rawDir } from '#support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'compactor-bad-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The message of the UserError `fn` throws (fails the test if it throws anything else). */
function userError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    const msg = (e as Error).message;
    expect(msg).not.toContain('\n');
    return msg;
  }
  throw new Error('expected a UserError');
}

describe('bad input (D3)', () => {
  it('D3: malformed JSONL names the file and the line', () => {
    const text =
      '{"role":"user","content":"a"}\n{"role":"assistant","content":"b"}\n{"role": oops}\n{"role":"user","content":"c"}\n';
    expect(userError(() => parseSession(text, { fileName: 'c.jsonl' }))).toMatch(
      /^c\.jsonl: line 3: malformed JSON/,
    );
  });

  it('D3: a truncated JSON document names the file and where it ends', () => {
    const full = readFileSync(
      join(rawDir, 'gruckion__mini-swe-agent/django__django-12276.traj.json'),
      'utf8',
    );
    const msg = userError(() => parseSession(full.slice(0, 5000), { fileName: 'cut.traj.json' }));
    expect(msg).toMatch(/^cut\.traj\.json: malformed JSON/);
  });

  it('D3: a truncated last JSONL line says so', () => {
    const text = readFileSync(fixture('codex-rollout.jsonl'), 'utf8');
    const cut = text.slice(0, text.length - 40);
    expect(userError(() => parseSession(cut, { fileName: 'r.jsonl' }))).toMatch(
      /^r\.jsonl: line 21: truncated or malformed JSON/,
    );
  });

  it.each([
    [
      'openai-chat',
      '[{"role":"user","content":"a"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","function":{"name":"f","arguments":{"x":1}}}]}]',
      /^f\.json: \[1\]\.tool_calls\[0\]\.function\.arguments: .*string/,
    ],
    ['openai-chat', '{"messages":[{"role":"wizard","content":"a"}]}', /^f\.json: messages\[0\]\.role: /],
    ['openai-chat', '[{"role":"tool","content":"x"}]', /^f\.json: \[0\]\.tool_call_id: required/],
    [
      'anthropic',
      '{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":"oops"}]}]}',
      /^f\.json: messages\[0\]\.content\[0\]\.input: /,
    ],
    [
      'anthropic',
      '{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":7}]}]}',
      /^f\.json: messages\[0\]\.content\[0\]\.tool_use_id: /,
    ],
    [
      'openai-responses',
      '{"input":[{"type":"function_call","name":"n","arguments":"{}"}]}',
      /^f\.json: input\[0\]\.call_id: /,
    ],
    [
      'canonical',
      '{"format":"compactor.canonical","version":1,"messages":[{"role":"user","content":5}]}',
      /^f\.json: messages\[0\]\.content: /,
    ],
    ['swe-agent', '{"history":[{"role":"user"}],"trajectory":[]}', /^f\.json: history\[0\]\.content: /],
  ] as const)('D3: wrong field types in %s name the entry and field (%#)', (from, text, pattern) => {
    expect(userError(() => parseSession(text, { from, fileName: 'f.json' }))).toMatch(pattern);
  });

  it('D3: a Claude Code line with a wrong field names the line', () => {
    const lines = readFileSync(fixture('claude-code-small.jsonl'), 'utf8').split('\n');
    lines[3] = lines[3].replace('"uuid":"u3"', '"uuid":3');
    expect(userError(() => parseSession(lines.join('\n'), { fileName: 'cc.jsonl' }))).toMatch(
      /^cc\.jsonl: line 4: uuid: /,
    );
  });

  it('D3: binary garbage (NUL bytes) is refused before parsing', () => {
    const p = join(dir, 'garbage.bin');
    writeFileSync(p, Buffer.from([0x7b, 0x22, 0x00, 0xff, 0x13, 0x00]));
    expect(userError(() => readSessionFile(p))).toMatch(/garbage\.bin: binary data \(NUL byte at offset 2\)/);
  });

  it('D3: invalid UTF-8 without NUL bytes is refused', () => {
    const p = join(dir, 'latin1.json');
    writeFileSync(p, Buffer.from([0x5b, 0xff, 0xfe, 0x5d]));
    expect(userError(() => readSessionFile(p))).toMatch(/latin1\.json: not valid UTF-8/);
  });

  it('D3: a 50 MB garbage file fails fast with one line and no OOM', () => {
    const p = join(dir, 'big.bin');
    const buf = Buffer.alloc(50 * 1024 * 1024);
    for (let i = 0; i < buf.length; i += 4096) buf.write('garbage!', i);
    writeFileSync(p, buf);
    expect(userError(() => readSessionFile(p))).toMatch(/big\.bin: binary data/);
    // Text garbage of the same size is read, then refused as an unknown format.
    const q = join(dir, 'big.txt');
    writeFileSync(q, Buffer.alloc(50 * 1024 * 1024, 'lorem ipsum '));
    expect(userError(() => readSessionFile(q))).toMatch(/big\.txt: unknown format/);
  });

  it('D3: missing files and directories name the path', () => {
    expect(userError(() => readSessionFile(join(dir, 'nope.json')))).toMatch(
      /nope\.json: cannot read file: no such file or directory \(ENOENT\)/,
    );
    expect(userError(() => readSessionFile(dir))).toMatch(/is a directory/);
  });

  it('D3: an unknown --from value lists the valid formats', () => {
    expect(userError(() => parseSession('[]', { from: 'bogus' as never, fileName: 'x' }))).toMatch(
      /^unknown format 'bogus' \(expected one of: canonical, openai-chat/,
    );
  });
});
