import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { exportSession, parseSession, readSessionFile } from '#src/formats/index.js';
import { ESCAPE_MIN_BYTES } from '#src/formats/json-escape.js';
import { readSessionText } from '#src/formats/read-file.js';
import { msg, type Message } from '#src/messages/message.js';

const dir = mkdtempSync(join(tmpdir(), 'compactor-large-json-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Every UTF-8 length: Latin-1 (2 bytes), em dash and CJK (3), emoji (4, a surrogate pair), plus
// characters JSON would otherwise carry raw (U+2028) and escapes already in the text.
const WIDE = 'café — 你好 😀 \u2028 "quoted" \\ back\tslash ';

function largeSession(): Message[] {
  const out: Message[] = [msg.system('You are a coding agent.'), msg.user(`Fix it ${WIDE}`)];
  for (let i = 0; out.length < 2 + 2 * 1_200; i++) {
    out.push(
      msg.assistant('', [{ id: `call_${i}`, name: 'read_file', arguments: `{"path":"src/ü${i}.ts"}` }]),
    );
    out.push(msg.tool(`call_${i}`, `${WIDE}${i} `.repeat(220)));
  }
  return out;
}

describe('a large JSON session file is read at one byte a character (D2, D3)', () => {
  it.each(['openai-chat', 'canonical'] as const)(
    'D2: a %s file over the size limit imports the same messages as its text parsed directly',
    (format) => {
      const text = exportSession(largeSession(), format);
      const file = join(dir, `large-${format}.json`);
      writeFileSync(file, `\ufeff${text}`);
      expect(Buffer.byteLength(text)).toBeGreaterThan(ESCAPE_MIN_BYTES);
      const read = readSessionText(file);
      expect(/^[\x00-\x7f]*$/.test(read)).toBe(true);
      expect(readSessionFile(file).sessions[0].messages).toEqual(parseSession(text).sessions[0].messages);
    },
  );

  it('D3: a small file keeps its text exactly (error columns count its own characters)', () => {
    const file = join(dir, 'small.json');
    writeFileSync(file, exportSession([msg.user(WIDE)], 'openai-chat'));
    expect(readSessionText(file)).toContain('café — 你好 😀');
  });
});
