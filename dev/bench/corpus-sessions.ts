import { basename } from 'node:path';
import { readSessionFile } from '../../src/formats/index.js';
import type { Message } from '../../src/messages/message.js';
import { findEvidenceNeeds, type EvidenceNeeds } from '../replay/evidence.js';
import { corpusFiles } from './corpus.js';
import { syntheticAgentSession } from './synthetic-agent-session.js';

/** One session of the pilot with its precomputed evidence needs. */
export interface CorpusSession {
  name: string;
  messages: Message[];
  needs: EvidenceNeeds;
  /** Generated, not recorded (reported as such). */
  synthetic?: boolean;
}

/** A corpus file that could not be imported (reported; the run goes on). */
export interface ImportFailure {
  file: string;
  error: string;
}

/**
 * Every session of every importable corpus file (multi-session files give every session;
 * a sub-agent sidechain counts as its own, short session and is never concatenated into a
 * long one). A file that fails to import is reported, not fatal.
 */
export function loadCorpusSessions(dir: string): { sessions: CorpusSession[]; failures: ImportFailure[] } {
  const sessions: CorpusSession[] = [];
  const failures: ImportFailure[] = [];
  for (const file of corpusFiles(dir)) {
    try {
      const imported = readSessionFile(file);
      imported.sessions.forEach((s, k) => {
        const name = imported.sessions.length > 1 ? `${basename(file)}#${k}` : basename(file);
        sessions.push({ name, messages: s.messages, needs: findEvidenceNeeds(s.messages) });
      });
    } catch (e) {
      failures.push({ file: basename(file), error: e instanceof Error ? e.message : String(e) });
    }
  }
  return { sessions, failures };
}

/**
 * Synthetic long sessions added to the real corpus (full run, --quick). With 20 beside the 36
 * real sessions (3 of them over 80k tokens) a peer that acts on every long session already
 * acted on a third of the corpus, but each half then held only 10 long sessions:
 * at 64k the settings differed by whole summary calls per session, and an 8-cent total could
 * flip between halves. 100 gave each half about 50 at about 8 minutes of replay while the
 * bench replayed a hand-written compaction that shared its passes between policies; replayed
 * through the session API every policy pays its own passes (about 50 s per long session over
 * the six windows on 2 cores), so the full run keeps 12 and says so.
 */
export const SYNTHETIC_SESSIONS = { full: 12, quick: 2 };

/**
 * SYNTHETIC long sessions (names start with `synthetic:`), from about 130k to about 250k
 * tokens, so every peer's trigger (up to Anthropic's 100k input tokens) is passed in each of
 * them at the 200k window (a session of 100k barely reached it and the peers did not fire).
 */
export function syntheticLongSessions(count: number): CorpusSession[] {
  return Array.from({ length: count }, (_, k) => {
    const tokens = Math.round(130_000 + (120_000 * k) / Math.max(1, count - 1));
    const messages = syntheticAgentSession({ targetChars: tokens * 4, seed: 1_000 + k });
    return {
      name: `synthetic:long-${String(k + 1).padStart(2, '0')}-${Math.round(tokens / 1000)}k`,
      messages,
      needs: findEvidenceNeeds(messages),
      synthetic: true,
    };
  });
}

/**
 * Sessions of SYNTHETIC large reads (names start with `synthetic:reads-`): every result a file
 * of 2,000–8,000 tokens, so two or three fill an 8k or 16k window (where agent loops with
 * ordinary source files overflowed). About 40k to 120k tokens each: few turns, so they are
 * cheap to replay.
 */
export const SYNTHETIC_READ_SESSIONS = { full: 20, quick: 2 };

/** See {@link SYNTHETIC_READ_SESSIONS}. */
export function syntheticLargeReadSessions(count: number): CorpusSession[] {
  return Array.from({ length: count }, (_, k) => {
    const tokens = Math.round(40_000 + (80_000 * k) / Math.max(1, count - 1));
    const messages = syntheticAgentSession({
      targetChars: tokens * 4,
      seed: 5_000 + k,
      readTokens: [2_000, 8_000],
    });
    return {
      name: `synthetic:reads-${String(k + 1).padStart(2, '0')}-${Math.round(tokens / 1000)}k`,
      messages,
      needs: findEvidenceNeeds(messages),
      synthetic: true,
    };
  });
}

/** FNV-1a of a name: a fixed, order-independent split key. */
function fnv(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * Fixed split by session into a tuning half and a check half: sessions sorted by a hash of
 * their name, alternately assigned, real and synthetic sessions separately so each half gets
 * its share of both. Adding a session moves only its neighbours in hash order.
 */
export function splitSessions(sessions: readonly CorpusSession[]): {
  tuning: CorpusSession[];
  check: CorpusSession[];
} {
  const tuning: CorpusSession[] = [];
  const check: CorpusSession[] = [];
  for (const group of [sessions.filter((s) => !s.synthetic), sessions.filter((s) => s.synthetic)]) {
    [...group]
      .sort((a, b) => fnv(a.name) - fnv(b.name) || (a.name < b.name ? -1 : 1))
      .forEach((s, i) => (i % 2 === 0 ? tuning : check).push(s));
  }
  return { tuning, check };
}
