'use strict';
/*
 * Jest's TypeScript transform: esbuild strips the types, file by file. tsconfig.json sets
 * isolatedModules, so no file needs another to compile, and `npm test` type-checks the whole
 * project with tsc beside it; here only the JavaScript is wanted. On a fresh clone (CI, no
 * Jest cache) this compiles the ~800 files the tests load in a tenth of the CPU that
 * TypeScript's own compiler took per file. Plain CommonJS: Jest loads it as it is.
 */
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const esbuild = require('esbuild');

const version = require('esbuild/package.json').version;
const self = createHash('sha256').update(readFileSync(module.filename)).digest('hex');

// What TypeScript would emit for these files (tsconfig.json: target ES2022, so class fields
// are defined, not assigned).
const options = (filename, esm) => ({
  loader: filename.endsWith('x') ? 'tsx' : 'ts',
  format: esm ? 'esm' : 'cjs',
  target: 'es2022',
  sourcemap: 'external',
  sourcesContent: false,
  sourcefile: filename,
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
});

function process(source, filename, transformOptions) {
  const { code, map } = esbuild.transformSync(source, options(filename, transformOptions.supportsStaticESM));
  return { code, map };
}

module.exports = {
  process,
  processAsync: async (source, filename, transformOptions) => process(source, filename, transformOptions),
  getCacheKey: (source, filename, transformOptions) =>
    createHash('sha256')
      .update(version)
      .update(self)
      .update(String(transformOptions.supportsStaticESM))
      .update(filename)
      .update(source)
      .digest('hex'),
};
