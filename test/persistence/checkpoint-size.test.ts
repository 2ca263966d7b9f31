import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syntheticSession } from '#dev/bench/synthetic-session.js';
import { msg } from '#src/messages/message.js';
import { RefCheckpointSchema, type Checkpoint, type RefCheckpoint } from '#src/runtime/index.js';
import { createCompactorSession } from '#src/session/index.js';

// A window the first turn on both histories compacts in.
const capacity = 32_000;
const pending = () => [msg.user('Step 1: check the next failing test.'), msg.assistant('Looked at it.')];

/** One compacting turn on a session of `size` messages: its last checkpoint file, and every checkpoint taken. */
async function compactingTurn(size: number) {
  const dir = mkdtempSync(join(tmpdir(), 'compactor-cp-size-'));
  const taken: Checkpoint[] = [];
  const session = createCompactorSession({
    history: syntheticSession(size),
    sessionDir: dir,
    limits: { capacity },
  });
  try {
    const result = await session.runTurn({ pending: pending(), onCheckpoint: (c) => taken.push(c) });
    expect(result.decision).toBe('compacted');
    const file = join(dir, 'snapshots', 'turn.json');
    const cp = RefCheckpointSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
    return { bytes: statSync(file).size, cp, taken, history: result.history };
  } finally {
    session.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bytes of a checkpoint without its texts (the summary and its receipt). */
const withoutTexts = (cp: RefCheckpoint) => JSON.stringify({ ...cp, texts: {} }).length;

describe('a turn checkpoint does not grow with the history (R2)', () => {
  it('R2: the compacting turn checkpoints references and the summary text, about the same size at 1k and 4k messages; it resumes to the same history', async () => {
    const small = await compactingTurn(1_002);
    const large = await compactingTurn(4_002);
    // The summary message names every tool result it replaced (a span index that grows with
    // the history): the checkpoint refers to them in the history instead.
    expect(large.cp.writtenRefs).toBeDefined();
    expect(withoutTexts(large.cp)).toBeLessThan(12_000);
    expect(large.bytes).toBeLessThan(1.5 * small.bytes);
    // The summary text is in the checkpoint once, not again inside the summary message.
    const summary = Object.values(large.cp.texts).reduce((a, b) => (a.length >= b.length ? a : b));
    expect(JSON.stringify(large.cp).split(JSON.stringify(summary).slice(1, 200)).length).toBe(2);

    // A checkpoint taken after the summary message was written resumes to the same history.
    const late = [...large.taken]
      .reverse()
      .find((c) => c.version !== 1 && c.writtenRefs !== undefined && c.snapshot.status === 'active');
    expect(late).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'compactor-cp-resume-'));
    const session = createCompactorSession({
      history: syntheticSession(4_002),
      sessionDir: dir,
      limits: { capacity },
    });
    try {
      const resumed = await session.runTurn({ pending: pending(), resumeFrom: late! });
      expect(resumed.decision).toBe('compacted');
      expect(resumed.history).toEqual(large.history);
    } finally {
      session.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
