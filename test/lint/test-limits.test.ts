import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import config from '../../jest.config.js';

// Tests fail fast: a hung test fails within the default limit, and the files that start
// processes say so by raising their own limit; a Restate suite never skips silently in CI.
const root = join(import.meta.dirname, '../..');
const testFiles = readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts') && !f.startsWith('lint/'))
  .map((f) => ({ file: `test/${f}`, text: readFileSync(join(root, 'test', f), 'utf8') }));

/** Starts the compiled CLI, node, npx or Python as a child process, a Restate server or agent CLIs. */
const STARTS_PROCESSES =
  /#support\/(compiled-cli|serve-client-loops)\.js|#dev\/restate\/harness\.js|#dev\/agents\/agent-row\.js|\b(spawn|spawnSync|exec|execFile|execFileSync)\)?\(\s*(process\.execPath|'npx'|python)/;

describe('test time limits', () => {
  it('every test gets at most 60 s unless its file raises the limit', () => {
    expect(config.testTimeout).toBeLessThanOrEqual(60_000);
  });

  it('the files that start processes raise their limit with a named one, and only they do', () => {
    const long = testFiles.filter((t) => STARTS_PROCESSES.test(t.text));
    expect(long.length).toBeGreaterThan(10);
    const unset = long.filter((t) => !/jest\.setTimeout\((PROCESS|RESTATE)_TEST_MS\)/.test(t.text));
    expect(unset.map((t) => t.file)).toEqual([]);
    const raisedElsewhere = testFiles.filter(
      (t) =>
        /jest\.setTimeout\(|testTimeout/.test(t.text) &&
        !long.includes(t) &&
        !t.file.startsWith('test/lint/'),
    );
    expect(raisedElsewhere.map((t) => t.file)).toEqual([]);
  });

  it('every Restate suite fails where COMPACTOR_RESTATE_REQUIRED is set and the install is missing', () => {
    const restate = testFiles.filter((t) => t.text.includes('#dev/restate/harness.js'));
    expect(restate.length).toBeGreaterThanOrEqual(2);
    const silent = restate.filter((t) => !/restateSuite\(\)/.test(t.text) || /restateInstall\(/.test(t.text));
    expect(silent.map((t) => t.file)).toEqual([]);
  });
});
