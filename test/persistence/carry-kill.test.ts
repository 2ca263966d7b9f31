import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { freeEncoders } from '#src/estimate/counters.js';
import { Session } from '#src/session/session.js';
import { readExchanges } from '#support/session/fixtures.js';
import { requireBuild } from '#support/compiled-cli.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';
import {
  observedTurn,
  PLAN_OPENING,
  planOptions,
  turnPlans,
  type TurnPlan as Plan,
} from '#support/session/turn-plans.js';

/**
 * A session killed between turns (SIGKILL, no close) and opened again decides as one that
 * never stopped: a child process plays the first turns of a plan in a session directory and
 * is killed; the directory is opened again here and the rest of the turns are played; every
 * later decision and request equals the uninterrupted run's.
 */

jest.setTimeout(PROCESS_TEST_MS);
afterAll(freeEncoders);

const ROOT = join(import.meta.dirname, '../..');
const CHILD = join(import.meta.dirname, 'carry-kill-child.mjs');

/** Each turn's pending messages. */
function turnsOf(p: Plan) {
  let next = 0;
  return p.growth.map((n) => {
    const pending = readExchanges(next, n);
    next += n;
    return pending;
  });
}

/** Settings a child can be given as JSON (the estimator is rebuilt there). */
function jsonOptions(p: Plan) {
  const { estimator: _e, ...rest } = planOptions(p);
  return rest;
}

/** Plays the first turns in a child and kills it once they are done; returns their decisions. */
function playAndKill(dir: string, planFile: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, dir, planFile], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const decisions: string[] = [];
    let out = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const lines = out.split('\n');
      out = lines.pop()!;
      for (const line of lines)
        if (line === 'ready') child.kill('SIGKILL');
        else decisions.push(line.slice('turn '.length));
    });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL'
        ? resolve(decisions)
        : reject(new Error(`child exited ${code}: ${stderr.slice(0, 500)}`)),
    );
  });
}

const sessionOf = (p: Plan, sessionDir: string, first: boolean) =>
  new Session({ sessionDir, ...planOptions(p), ...(first ? { history: PLAN_OPENING } : {}) });

describe('a session killed between turns continues as one that never stopped', () => {
  beforeAll(requireBuild);

  it('R2: killed (SIGKILL) after some turns and opened again, a session makes the same later decisions and requests', async () => {
    let compactedAfterKill = 0;
    await fc.assert(
      fc.asyncProperty(turnPlans, fc.nat(), async (plan, at) => {
        const root = mkdtempSync(join(tmpdir(), 'compactor-carry-kill-'));
        try {
          const turns = turnsOf(plan);
          const straight: string[] = [];
          const s = sessionOf(plan, join(root, 'straight'), true);
          for (const pending of turns) straight.push(observedTurn(await s.runTurn({ pending })));
          s.close();
          const kill = 1 + (at % (turns.length - 1)); // turns played before the kill
          const planFile = join(root, 'plan.json');
          writeFileSync(
            planFile,
            JSON.stringify({
              options: jsonOptions(plan),
              opening: PLAN_OPENING,
              turns: turns.slice(0, kill),
            }),
          );
          const dir = join(root, 'killed');
          const before = await playAndKill(dir, planFile);
          expect(before).toEqual(
            straight.slice(0, kill).map((t) => (JSON.parse(t) as { decision: string }).decision),
          );
          const reopened = sessionOf(plan, dir, false);
          const after: string[] = [];
          for (const pending of turns.slice(kill))
            after.push(observedTurn(await reopened.runTurn({ pending })));
          reopened.close();
          expect(after).toEqual(straight.slice(kill));
          compactedAfterKill += after.filter((r) => r.includes('"decision":"compacted"')).length;
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      }),
      { numRuns: 8 },
    );
    // The plans must reach compaction after the kill, where the carried cache cycle changes the decision.
    expect(compactedAfterKill).toBeGreaterThan(0);
  });
});
