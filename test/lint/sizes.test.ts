import { describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';

// Lints generated source as if it sat at `filePath`, with the project's own eslint.config.js.
const eslint = new ESLint({ cwd: process.cwd() });
async function sizeFindings(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return result.messages
    .filter((m) => m.ruleId === 'max-lines' || m.ruleId === 'max-lines-per-function')
    .map((m) => m.ruleId!);
}

/** A function of `n` code lines (signature and closing brace included), a comment line between each. */
const fn = (name: string, n: number) =>
  `export function ${name}(): number {\n  let x = 0;\n${Array.from({ length: n - 4 }, (_, i) => `  // step ${i}\n  x += ${i};\n`).join('')}  return x;\n}\n`;

describe('small files and functions (eslint max-lines, max-lines-per-function)', () => {
  it('a function over 60 code lines in src/ is an error; 60 is fine and comments do not count', async () => {
    expect(await sizeFindings('src/projection/probe.ts', fn('ok', 60))).toEqual([]);
    expect(await sizeFindings('src/projection/probe.ts', fn('tooLong', 61))).toEqual([
      'max-lines-per-function',
    ]);
  });

  it('a file over 450 code lines in src/ is an error', async () => {
    const file = Array.from({ length: 11 }, (_, i) => fn(`f${i}`, 45)).join('\n');
    expect(await sizeFindings('src/formats/probe.ts', file)).toEqual(['max-lines']);
    expect(await sizeFindings('src/formats/probe.ts', fn('a', 45) + fn('b', 45))).toEqual([]);
  });

  it('outside src/ (tests, dev scripts) the limits do not apply', async () => {
    expect(await sizeFindings('dev/bench/probe.ts', fn('long', 80))).toEqual([]);
  });
});
