/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';
import { createDefaultEsmPreset } from 'ts-jest';

const config: Config = {
  ...createDefaultEsmPreset({ tsconfig: 'tsconfig.json' }),
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  // Two cores: one worker per core keeps tiktoken WASM memory bounded.
  maxWorkers: 2,
  testTimeout: 60_000,
};
export default config;
