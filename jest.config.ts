/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const config: Config = {
  // TypeScript files load as ES modules, compiled by esbuild (test/support/esbuild-transform.cjs).
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': '<rootDir>/test/support/esbuild-transform.cjs' },
  // Node, plus one tiktoken per worker shared by its test files (test/support/jest-environment.cjs).
  testEnvironment: '<rootDir>/test/support/jest-environment.cjs',
  roots: ['<rootDir>/test'],
  setupFiles: ['<rootDir>/test/support/fast-check-seed.ts'],
  // Files that start processes or run agent loops first when Jest has no timings of its own.
  testSequencer: '<rootDir>/test/support/long-first-sequencer.mjs',
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // The names tests import the code they check by (tsconfig.json "paths").
    '^#(src|machines|dev)/(.*?)(\\.js)?$': '<rootDir>/$1/$2',
    '^#support/(.*?)(\\.js)?$': '<rootDir>/test/support/$1',
    // The testing entry's example runs against the source in the repository's own tests.
    '^context-compactor/testing$': '<rootDir>/src/testing/index.ts',
    '^tiktoken$': '<rootDir>/test/support/tiktoken-shared.cjs',
  },
  // Two cores: one worker per core keeps tiktoken WASM memory bounded.
  maxWorkers: 2,
  // Tests bound their own work (counts, sizes, output they wait for), never a clock; this limit
  // only makes a hung test fail within a minute. The few files that start processes set a longer
  // one of their own (test/support/time-limits.ts; test/lint/test-limits.test.ts checks it).
  testTimeout: 60_000,
};
export default config;
