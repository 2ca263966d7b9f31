import { describe, expect, it } from '@jest/globals';
import type { AnyMachineSnapshot, AnyStateNode } from 'xstate';
import { getStateNodes } from 'xstate/graph';
import { pathsFor, runPath } from '../support/graph-helpers.js';
import { ALL_MODELS } from '../model/models.js';

/** State nodes that invoke an actor, with the invoked src. */
function invokingStates(root: AnyStateNode): Array<{ node: AnyStateNode; src: string }> {
  return getStateNodes(root).flatMap((node) =>
    node.invoke.map((inv) => ({ node, src: typeof inv.src === 'string' ? inv.src : inv.id })),
  );
}

describe('crash → JSON round trip → restore → continue, at every invoking state (xstate.md §A1.5)', () => {
  for (const model of ALL_MODELS) {
    const paths = pathsFor(model);
    for (const { node, src } of invokingStates(model.machine.root))
      it(`${model.machine.id}.${node.path.join('.')}: ${src} runs again and the outcome is unchanged`, async () => {
        // The longest path through the state exercises the most steps after the restore.
        const candidates = paths
          .map((p) => ({
            ...p,
            index: p.path.steps.findIndex(
              (s, i) =>
                i < p.path.steps.length - 1 && (s.state as AnyMachineSnapshot).matches(node.path.join('.')),
            ),
          }))
          .filter((p) => p.index >= 0)
          .sort((a, b) => b.path.steps.length - a.path.steps.length);
        expect(candidates.length).toBeGreaterThan(0);
        const { input, path, index } = candidates[0]!;
        const straight = await runPath(model, input.input, path);
        const crashed = await runPath(model, input.input, path, { crashAfter: new Set([index]) });
        expect(crashed.reinvoked).toContain(src);
        expect(crashed.actor.getSnapshot().status).toBe('done');
        expect(crashed.actor.getSnapshot().output).toEqual(straight.actor.getSnapshot().output);
        straight.actor.stop();
        crashed.actor.stop();
      });
  }
});
