import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openSessionStore } from '#src/store/index.js';
import { agentSession, canonicalFile, cli, workDir } from '#support/cli-sessions.js';

const dir = workDir('resume');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const session = agentSession();
canonicalFile(dir, 'session.json', session);
const grown = [...session, ...agentSession(34).slice(session.length)];
canonicalFile(dir, 'grown.json', grown);
canonicalFile(dir, 'other.json', agentSession(12, 500));
const recorded = (store: string) =>
  openSessionStore(join(dir, store), { create: false })
    .events()
    .filter((e) => e.type === 'message.appended').length;

describe('resuming a session directory (R1)', () => {
  it('R1: run on a directory holding the session continues it: only new messages are recorded, the turn runs on the stored history', async () => {
    const first = await cli(['run', 'session.json', '--capacity', '8000', '--session-dir', 's1', '--json'], {
      cwd: dir,
    });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out).boundary).not.toBeNull();
    expect(recorded('s1')).toBe(session.length);
    const live = openSessionStore(join(dir, 's1'), { create: false }).loadHistory();
    // The same file again: nothing new to record; the turn starts from the compacted history.
    const again = await cli(['compact', 'session.json', '--session-dir', 's1', '--json'], { cwd: dir });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out).items.before).toBe(live.length);
    expect(recorded('s1')).toBe(session.length);
    // The grown transcript: its new messages are appended after the recorded ones.
    const grownRun = await cli(['run', 'grown.json', '--capacity', '8000', '--session-dir', 's1', '--json'], {
      cwd: dir,
    });
    expect(grownRun.code).toBe(0);
    expect(recorded('s1')).toBe(grown.length);
    expect(openSessionStore(join(dir, 's1'), { create: false }).warnings()).toEqual([]);
  });

  it('R1: a different session is refused (exit 2, nothing appended); --new moves the old one aside and starts over', async () => {
    await cli(['run', 'session.json', '--capacity', '1000000', '--session-dir', 's2'], { cwd: dir });
    const before = readFileSync(join(dir, 's2', 'events.jsonl'), 'utf8');
    const r = await cli(['run', 'other.json', '--session-dir', 's2'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^compactor: run: --session-dir: .*already holds a different session.*--new.*\n$/);
    expect(readFileSync(join(dir, 's2', 'events.jsonl'), 'utf8')).toBe(before);
    const fresh = await cli(['run', 'other.json', '--session-dir', 's2', '--new'], { cwd: dir });
    expect(fresh.code).toBe(0);
    expect(recorded('s2')).toBe(agentSession(12, 500).length);
    const [old] = readdirSync(join(dir, 's2', 'previous'));
    expect(readFileSync(join(dir, 's2', 'previous', old!, 'events.jsonl'), 'utf8')).toBe(before);
  });

  it('R1: a run that fails before its boundary commit leaves the directory as it was', async () => {
    await cli(['run', 'session.json', '--capacity', '1000000', '--session-dir', 's3'], { cwd: dir });
    const before = readFileSync(join(dir, 's3', 'events.jsonl'));
    mkdirSync(join(dir, 'taken'));
    for (const bad of ['missing/next.json', 'taken']) {
      const r = await cli(['run', 'grown.json', '--capacity', '8000', '--session-dir', 's3', '--out', bad], {
        cwd: dir,
      });
      expect(r.code).toBe(2);
      expect(r.err.split('\n')).toHaveLength(2);
      expect(readFileSync(join(dir, 's3', 'events.jsonl'))).toEqual(before);
    }
    expect(existsSync(join(dir, 's3', 'events.jsonl.corrupt'))).toBe(false);
  });
});
