'use strict';
/*
 * The Node test environment, plus one tiktoken per jest worker. Jest gives every test file
 * fresh modules, so each file that counts tokens loaded tiktoken's WASM and built its
 * encoders again (seconds of CPU per file on a busy machine, and 18 MB of WASM memory each
 * that GC never returns). This environment lives as long as the worker: it loads tiktoken
 * once, and tiktoken-shared.cjs beside it (what `tiktoken` maps to in jest.config.ts) hands
 * every test file the same encoders, whose free() then does nothing. Plain CommonJS: jest
 * loads it as it is, with no transform.
 */
const { TestEnvironment } = require('jest-environment-node');

const encoders = new Map();
let tiktoken;

/** The tiktoken module as test files see it: get_encoding gives the worker's one encoder of a name. */
function shared() {
  tiktoken ??= require('tiktoken');
  const real = tiktoken;
  const keep = (name) => {
    let enc = encoders.get(name);
    if (enc === undefined) {
      enc = real.get_encoding(name);
      // Every test file of the worker uses it: one file's afterAll must not free it.
      Object.defineProperty(enc, 'free', { value: () => undefined });
      encoders.set(name, enc);
    }
    return enc;
  };
  return {
    ...real,
    get_encoding: (name, extra) => (extra === undefined ? keep(name) : real.get_encoding(name, extra)),
  };
}

class CompactorTestEnvironment extends TestEnvironment {
  async setup() {
    await super.setup();
    // Loaded on first use, not here: most test files count nothing.
    Object.defineProperty(this.global, '__compactorTiktoken', { get: shared });
  }
}

module.exports = CompactorTestEnvironment;
