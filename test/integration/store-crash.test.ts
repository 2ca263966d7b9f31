import { describe, expect, it, jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { textOf } from '#src/messages/message.js';
import { openSessionStore, type SessionStore } from '#src/store/index.js';
import { requireBuild } from '#support/compiled-cli.js';
import { prng } from '#dev/bench/synthetic-session.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

const ROOT = join(import.meta.dirname, '../..');
const CHILD = join(import.meta.dirname, 'store-crash-child.mjs');
// Kills per write mode. Each lands at a random ack count, so every kind of write (message,
// boundary, snapshot) is cut mid-way across the rounds; more rounds add spawns, not new cases.
const KILLS = 12;

/** Runs the child until it has acked `acks` writes, SIGKILLs it, returns the acked lines. */
function runAndKill(dir: string, tag: string, acks: number, mode: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, dir, tag, mode], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let buf = '';
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const p of parts) if (p !== 'ready') lines.push(p);
      if (!killed && lines.length >= acks) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`child exited ${code}: ${stderr.slice(0, 500)}`));
      // Lines that reached us whole were acknowledged after their durable write.
      else resolve(lines);
    });
  });
}

/**
 * Every acknowledged boundary restores a non-empty history and every artifact parses, except
 * those in `checked` (read back after an earlier kill: they are never written again).
 */
function checkWhole(store: SessionStore, dir: string, boundaries: string[], checked: Set<string>): void {
  for (const id of boundaries.filter((b) => !checked.has(`b ${b}`))) {
    expect(store.restoreAt(id).length).toBeGreaterThan(0);
    checked.add(`b ${id}`);
  }
  for (const f of readdirSync(join(dir, 'artifacts')).filter((a) => !checked.has(`a ${a}`))) {
    expect(() => JSON.parse(readFileSync(join(dir, 'artifacts', f), 'utf8'))).not.toThrow();
    checked.add(`a ${f}`);
  }
}

describe('R2 crash safety (SIGKILL at random points)', () => {
  it.each(['sync', 'queued'])(
    'R2: after every kill the store loads, every acknowledged write is present, no artifact is torn (%s writes)',
    async (mode) => {
      requireBuild();
      const rand = prng(20_26);
      const dir = mkdtempSync(join(tmpdir(), 'compactor-crash-'));
      const ackedMessages: string[] = [];
      const ackedBoundaries: string[] = [];
      let lastSnapshot: { tag: string; i: number } | undefined;
      let tornTails = 0;
      const checked = new Set<string>();
      for (let k = 0; k < KILLS; k++) {
        const tag = `it${k}`;
        const lines = await runAndKill(dir, tag, 1 + Math.floor(rand() * 40), mode);
        for (const l of lines) {
          const [kind, a, b] = l.split(' ');
          if (kind === 'm') ackedMessages.push(a);
          else if (kind === 'b') ackedBoundaries.push(a);
          else if (kind === 's') lastSnapshot = { tag: a, i: Number(b) };
        }
        const store = openSessionStore(dir);
        tornTails += store.warnings().filter((w) => /unfinished write/.test(w.message)).length;
        const appended = new Set(
          store
            .events()
            .flatMap((e) => (e.type === 'message.appended' ? [textOf(e.message.content).split(' ')[0]] : [])),
        );
        for (const m of ackedMessages) expect(appended.has(m)).toBe(true);
        const ids = new Set(store.listBoundaries().map((x) => x.id));
        for (const id of ackedBoundaries) expect(ids.has(id)).toBe(true);
        if (lastSnapshot) {
          const snap = store.loadSnapshot('machine') as { tag: string; i: number };
          expect(snap.tag === lastSnapshot.tag ? snap.i >= lastSnapshot.i : true).toBe(true);
        }
        // Each boundary and artifact is read back whole once it appears (every one again at the end).
        checkWhole(store, dir, ackedBoundaries, checked);
        store.close();
      }
      const store = openSessionStore(dir);
      checkWhole(store, dir, ackedBoundaries, new Set());
      store.close();
      rmSync(dir, { recursive: true, force: true });
      expect(ackedMessages.length).toBeGreaterThan(20);
      expect(ackedBoundaries.length).toBeGreaterThan(0);
      // Not asserted (timing-dependent), but reported so the test shows it exercised crashes.
      process.stdout.write(
        `R2 crash test (${mode}): ${ackedMessages.length} acked messages, ${ackedBoundaries.length} boundaries, ${tornTails} torn tails repaired\n`,
      );
    },
  );
});
