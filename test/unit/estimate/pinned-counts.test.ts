import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLED_CORPUS_DIR } from '#dev/bench/corpus.js';
import { freeEncoders } from '#src/estimate/counters.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { readSessionFile } from '#src/formats/index.js';

afterAll(freeEncoders);

// Token counts of whole sessions, measured by encoding every text whole with tiktoken before
// long runs were counted in pieces; counting in pieces must not change them by one token.
const BUNDLED: Array<[string, number, number]> = [
  ['examples/sessions/claude-code-orchestrator.jsonl', 84_844, 83_729],
  ['examples/sessions/django__django-16560.traj.json', 46_782, 47_129],
];
const SHARED: Array<[string, number, number]> = [
  ['All-Hands-AI__OpenHands/resolver__mock_output__output.jsonl', 22_453, 22_183],
  ['d-kimuson__claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl', 14_011, 13_429],
  ['gruckion__mini-swe-agent/django__django-12276.traj.json', 16_710, 16_556],
  ['Aider-AI__aider/census.md', 2_759, 2_772],
  ['SWE-agent__SWE-agent/ctf__web__i_got_id_demo.traj', 14_552, 14_482],
];

function sessionTokens(path: string, encoding: 'o200k_base' | 'cl100k_base'): number {
  const estimator = createEstimator({ encoding, textCacheSize: 0 });
  return readSessionFile(path).sessions.reduce((n, s) => n + estimator.history(s.messages), 0);
}

const corpus = BUNDLED_CORPUS_DIR;

describe('pinned session token counts (T1)', () => {
  it.each(BUNDLED)('T1: %s counts as pinned', (file, o200k, cl100k) => {
    expect([sessionTokens(file, 'o200k_base'), sessionTokens(file, 'cl100k_base')]).toEqual([o200k, cl100k]);
  });

  it.each(SHARED)('T1: corpus %s counts as pinned', (file, o200k, cl100k) => {
    const path = join(corpus, file);
    expect(existsSync(path)).toBe(true);
    expect([sessionTokens(path, 'o200k_base'), sessionTokens(path, 'cl100k_base')]).toEqual([o200k, cl100k]);
  });
});
