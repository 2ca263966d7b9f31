import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { __unsafe_getAllOwnEventDescriptors, type AnyMachineSnapshot } from 'xstate';
import { getSimplePaths } from 'xstate/graph';
import { eventsAt, handledEventTypes } from '#src/testing/generate-paths.js';
import {
  capacityRetryModel,
  compactionModel,
  hierarchicalSummaryModel,
  turnModel,
} from '#src/testing/models.js';
import {
  capacityRetryPaths,
  compactionPaths,
  hierarchicalSummaryPaths,
  turnPaths,
} from '#src/testing/paths.js';

// context-compactor/testing reads which events a state handles from public state-node fields;
// xstate's own list is internal (`__unsafe_`), so this pins the two together on every state the
// walk of every machine reaches: an xstate upgrade that changes either fails here.
describe('the events each state handles, without xstate internals', () => {
  it.each(
    [capacityRetryModel, hierarchicalSummaryModel, compactionModel, turnModel].map(
      (m) => [m.machine.id, m] as const,
    ),
  )('%s: every state the walk reaches handles the events xstate lists, in its order', (_id, model) => {
    let compared = 0;
    for (const input of Object.values(model.inputs))
      getSimplePaths(model.machine, {
        input,
        events: (snapshot) => {
          const s = snapshot as AnyMachineSnapshot;
          expect(handledEventTypes(s)).toEqual(__unsafe_getAllOwnEventDescriptors(s));
          compared++;
          return eventsAt(model, s);
        },
        toState: (snapshot) => snapshot.status === 'done',
        limit: model.limit ?? 20_000,
      });
    expect(compared).toBeGreaterThanOrEqual(3);
  });
});

describe('context-compactor/testing walks nothing when imported', () => {
  it('no module of src/testing calls generatePaths outside a function (the paths are walked on call)', () => {
    const dir = new URL('../../src/testing/', import.meta.url);
    const source = ts.createSourceFile(
      'paths.ts',
      readFileSync(new URL('paths.ts', dir), 'utf8'),
      ts.ScriptTarget.ES2022,
      true,
    );
    const topLevelCalls: string[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node)) return;
      if (ts.isCallExpression(node) && /generatePaths/.test(node.expression.getText(source)))
        topLevelCalls.push(node.getText(source));
      ts.forEachChild(node, visit);
    };
    visit(source);
    expect(topLevelCalls).toEqual([]);
  });

  it('each machine is walked once: a second call returns the same frozen paths', () => {
    for (const paths of [capacityRetryPaths, hierarchicalSummaryPaths, compactionPaths]) {
      const first = paths();
      expect(first.length).toBeGreaterThan(0);
      expect(paths()).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
    }
    expect(turnPaths().length).toBeGreaterThan(0);
  });

  it("each path function's doc names exactly the actors its machine invokes", () => {
    const text = readFileSync(new URL('../../src/testing/paths.ts', import.meta.url), 'utf8');
    for (const model of [capacityRetryModel, hierarchicalSummaryModel, compactionModel, turnModel]) {
      const doc = new RegExp(`\\(actors: ([^)]*)\\). \\*/\\nexport const ${model.machine.id}Paths\\b`).exec(
        text,
      );
      expect(doc?.[1]?.split(', ')).toEqual(Object.keys(model.machine.implementations.actors));
    }
  });
});
