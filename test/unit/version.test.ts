import { readFileSync } from 'node:fs';
import { VERSION } from '#src/version.js';

describe('package version', () => {
  it('src/version.ts matches package.json (the CLI prints it without reading files at run time)', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(VERSION).toBe(pkg.version);
  });
});
