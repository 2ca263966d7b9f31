import { describe, expect, it } from '@jest/globals';
import type { AnyMachineSnapshot } from 'xstate';
import { describePath, pathsFor, runPath, testModelFor } from '../support/graph-helpers.js';
import { turnModel } from './models/turn.model.js';

const paths = pathsFor(turnModel);

describe('turn model paths (H1–H6, §14)', () => {
  it('has paths', () => expect(paths.length).toBeGreaterThan(3));
  for (const { input, path } of paths)
    it(`[${input.name}] ${describePath(path)}`, async () => {
      const run = await runPath(turnModel, input.input, path, {
        afterStep: (_, actor, stubs) => {
          // H3: compaction gets the synced FULL history ref, never a projection ref.
          const call = stubs.pending('compaction');
          if (call) expect((call.input as { historyRef: string }).historyRef).toBe('t1:history:synced');
          // H2: a below-threshold turn never invokes compaction.
          const ctx = (actor.getSnapshot() as AnyMachineSnapshot).context as { decision: string | null };
          if (ctx.decision === 'below-threshold')
            expect(stubs.calls.some((c) => c.src === 'compaction')).toBe(false);
        },
      });
      run.actor.stop();
    });
});

describe('turn.cancelled from every working state aborts the in-flight actor', () => {
  const model = testModelFor(turnModel);
  const input = turnModel.inputs[0]!.input;
  const working = ['syncing', 'normalizing', 'clearing', 'estimating', 'compacting', 'rebuildingProjection'];
  for (const state of working)
    it(`H1/H3: cancel while ${state}`, async () => {
      const [prefix] = model.getShortestPaths({
        input,
        toState: (s: AnyMachineSnapshot) => s.matches({ working: state }),
      });
      expect(prefix).toBeDefined();
      const run = await runPath(turnModel, input, prefix!);
      const inFlight = run.stubs.calls.at(-1)!;
      expect(inFlight.signal.aborted).toBe(false);
      run.actor.send({ type: 'turn.cancelled' });
      expect(run.actor.getSnapshot().value).toBe('cancelled');
      expect(run.actor.getSnapshot().output.decision).toBe('cancelled');
      expect(inFlight.signal.aborted).toBe(true);
    });
});
