import { describe, expect, it } from '@jest/globals';
import { tarballProblems, type PackageJson, type Packed } from '#dev/consumer/tarball.js';

const pkg: PackageJson = {
  name: 'context-compactor',
  version: '1.0.0',
  exports: { '.': { types: './dist/src/index.d.ts', import: './dist/src/index.js' } },
  bin: { compactor: 'dist/src/bin/compactor.js' },
};
const shipped = [
  'dist/src/index.d.ts',
  'dist/src/index.js',
  'dist/src/bin/compactor.js',
  'README.md',
  'LICENSE',
];
const packed = (files: string[]): Packed => ({ file: 'x.tgz', size: 1, unpackedSize: 1, files });

describe('consumer test: tarball contents check', () => {
  it('accepts a tarball with the entries, the bin, README and LICENSE', () => {
    expect(tarballProblems(packed([...shipped, 'src/index.ts', 'dist/src/index.js.map']), pkg)).toEqual([]);
  });

  it('flags tests, fixtures, dev code, CI and configs', () => {
    const extra = [
      'test/unit/a.test.ts',
      'src/projection/__tests__/x.ts',
      'src/formats/fixtures/a.json',
      'src/x.spec.ts',
      'dev/bench/main.ts',
      'dist/dev/bench/main.js',
      '.ci/run',
      'jest.config.ts',
      'tsconfig.build.json',
      'examples/sessions/a.jsonl',
    ];
    const problems = tarballProblems(packed([...shipped, ...extra]), pkg);
    expect(problems.map((p) => p.split(':')[0])).toEqual(extra);
  });

  it('flags an exports target or bin the tarball lacks', () => {
    const problems = tarballProblems(packed(['dist/src/index.js', 'README.md', 'LICENSE']), pkg);
    expect(problems).toEqual([
      'dist/src/index.d.ts: named in package.json but not in the tarball',
      'dist/src/bin/compactor.js: named in package.json but not in the tarball',
    ]);
  });
});
