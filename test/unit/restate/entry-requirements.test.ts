import { describe, expect, it } from '@jest/globals';
import { compactorSession, endpoint, MIN_NODE_MAJOR } from '#src/restate/index.js';

// The Restate entry loads, and says plainly what it needs when the SDK cannot run here.
const major = Number(process.versions.node.split('.')[0]);

describe('context-compactor/restate on a Node without the Restate SDK', () => {
  (major < MIN_NODE_MAJOR ? it : it.skip)(
    'Node 20: creating the object or the endpoint is a one-line error naming the Node it needs',
    () => {
      expect(MIN_NODE_MAJOR).toBe(22);
      for (const create of [() => compactorSession(), () => endpoint()])
        expect(create).toThrow(
          new RegExp(
            `^context-compactor/restate needs Node 22 or newer \\(the Restate SDK does\\); this is Node ${process.versions.node}$`,
          ),
        );
    },
  );
});
