import { describe, expect, it } from '@jest/globals';
import { commands } from '../../src/cli/commands/index.js';
import { runCli } from '../support/cli.js';

// A rule id of the spec (N1, C10, H1–H6, S2 …) standing in text a user reads.
const RULE_ID = /\b[A-Z]\d{1,2}\b/g;
const EXAMPLE = 'examples/sessions/django__django-16560.traj.json';

describe('plain words: help and reports carry no rule ids', () => {
  it('the top-level help and every command --help name no rule id', async () => {
    const names = Object.keys(commands);
    expect(names).toEqual(expect.arrayContaining(['run', 'compact', 'project', 'plan']));
    const top = await runCli(['--help']);
    expect(top.out.match(RULE_ID)).toBeNull();
    for (const name of names) {
      const r = await runCli([name, '--help']);
      expect(r.code).toBe(0);
      expect(r.out.length).toBeGreaterThan(200);
      expect({ name, ids: r.out.match(RULE_ID) }).toEqual({ name, ids: null });
    }
  });

  it('the run and compact reports name no rule id', async () => {
    for (const command of ['run', 'compact']) {
      const r = await runCli([command, EXAMPLE]);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/strategy: local/);
      expect({ command, ids: r.out.match(RULE_ID) }).toEqual({ command, ids: null });
    }
  });
});
