import { afterAll, describe, expect, it } from '@jest/globals';
import { createCompactorSession, createEstimator, freeEncoders, type Message } from '#src/index.js';
import { readSessionFile } from '#src/entries/formats.js';
import { sessionDirs } from '#support/session/fixtures.js';

afterAll(freeEncoders);
const tempDir = sessionDirs();
const estimator = createEstimator({ encoding: 'chars' });
const django: Message[] = readSessionFile('examples/sessions/django__django-16560.traj.json').sessions[0]!
  .messages;
const limits = { capacity: 32_000, reservedOutput: 4_000 };

/** Every recall id the request names, with the original result it stands for. */
function clearedIds(request: readonly Message[]): string[] {
  return request.flatMap((m) =>
    m.role === 'tool' && typeof m.content === 'string' && m.content.startsWith('{"cleared"')
      ? [(JSON.parse(m.content) as { recall_id: string }).recall_id]
      : [],
  );
}
const originalOf = (id: string, request: readonly Message[]) => {
  const i = request.findIndex(
    (m) => m.role === 'tool' && m.content.toString().includes(`"recall_id":"${id}"`),
  );
  return django.find((m) => m.role === 'tool' && m.toolCallId === request[i].toolCallId)!;
};

describe('session.recall', () => {
  it('every cleared result resolves to its original; the tool is the same bytes in every session', () => {
    const s = createCompactorSession({ preset: 'vtcode', history: django, limits, estimator });
    const request = s.prepareRequest().messages;
    const ids = clearedIds(request);
    expect(ids.length).toBeGreaterThan(5);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(s.recall({ id }, request)).toBe(originalOf(id, request).content);
    const other = createCompactorSession({ estimator });
    expect(JSON.stringify(other.recallTool)).toBe(JSON.stringify(s.recallTool));
    s.close();
    other.close();
  });

  it('R1: ids still resolve after a compaction, with or without a store, and after the store is reopened', async () => {
    const dir = tempDir();
    const stored = createCompactorSession({
      preset: 'vtcode',
      sessionDir: dir,
      history: django,
      limits,
      estimator,
    });
    const memory = createCompactorSession({ preset: 'vtcode', history: django, limits, estimator });
    const request = stored.prepareRequest().messages;
    const ids = clearedIds(request);
    expect(ids.length).toBeGreaterThan(5);
    for (const s of [stored, memory]) {
      expect((await s.compact()).status).toBe('compacted');
      for (const id of ids) expect(s.recall({ id }, [])).toBe(originalOf(id, request).content);
    }
    stored.close();
    memory.close();
    const reopened = createCompactorSession({ sessionDir: dir, estimator });
    for (const id of ids) expect(reopened.recall({ id }, [])).toBe(originalOf(id, request).content);
    expect(reopened.recall({ id: 'r-00000000' })).toMatch(/no tool result with id/);
    reopened.close();
  });
});
