import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CommandContext } from './command.js';
import { UserError } from '../core/errors.js';
import { resolvePath } from './run-options.js';
import { writeFileAtomic } from '../io/atomic-write.js';
import type { Message } from '../messages/message.js';
import {
  defaultExportFormat,
  exportSession,
  parseExportFormat,
  type ExportFormat,
  type ImportedSession,
  type FormatName,
} from '../formats/index.js';
import {
  openSessionStore,
  SNAPSHOTS_DIR,
  type BoundaryInfo,
  type LockOptions,
  type SessionStore,
} from '../store/index.js';
import type { CompactionStrategy } from '../../machines/index.js';

/** A checked `--out` destination. */
export interface OutTarget {
  path: string;
  format: ExportFormat;
}

/**
 * Checks `--out`/`--to` before any work: the format is valid, the path is not the input and
 * its directory exists, so a finished run never fails at the last step.
 */
export function outTarget(
  command: string,
  ctx: CommandContext,
  out: string | undefined,
  to: string | undefined,
  input: { path: string; format: FormatName },
): OutTarget | null {
  const format = to === undefined ? defaultExportFormat(input.format) : parseExportFormat(to);
  if (out === undefined) return null;
  const path = resolvePath(ctx, out);
  if (path === input.path)
    throw new UserError(`${command}: --out must differ from the input file ${input.path}`);
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UserError(`${command}: --out: no such directory ${dir}`);
  return { path, format };
}

/** Writes messages to `--out` atomically (R2): the old file or the new one, never a torn one. */
export function writeOut(target: OutTarget, messages: readonly Message[], session: ImportedSession): void {
  try {
    writeFileAtomic(
      target.path,
      exportSession([...messages], target.format, { meta: session.meta, id: session.id }),
    );
  } catch (e) {
    throw new UserError(
      `${target.path}: cannot write output (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

/** A session directory opened for one run. */
export interface RunStore {
  store: SessionStore;
  dir: string;
  /** The turn checkpoint the runner rewrites after every step (R2; resumable). */
  checkpointPath: string;
}

/**
 * Opens `--session-dir` for a run and records the session's messages (R1). The directory
 * must be new or hold no events yet: a second run would otherwise append the same messages
 * again and fork the history.
 */
export function openRunStore(
  command: string,
  ctx: CommandContext,
  dirFlag: string,
  messages: readonly Message[],
  lock?: LockOptions,
): RunStore {
  const dir = resolvePath(ctx, dirFlag);
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new UserError(`${command}: --session-dir: ${dir} is not a directory`);
  const store = openSessionStore(dir, { lock });
  if (store.events().length > 0 || (existsSync(dir) && hasForeignFiles(dir))) {
    store.close();
    throw new UserError(
      `${command}: --session-dir: ${dir} already holds a session (use a new or empty directory)`,
    );
  }
  store.appendMessages(messages);
  return { store, dir, checkpointPath: join(dir, SNAPSHOTS_DIR, 'turn.json') };
}

/** Files other than the store's own (empty) layout and an inspection log. */
function hasForeignFiles(dir: string): boolean {
  return readdirSync(dir).some(
    (f) => !['events.jsonl', 'artifacts', 'snapshots', 'inspect.jsonl', 'lock'].includes(f),
  );
}

/**
 * R1: writes the full-history artifact and appends the `thread.compact_boundary` event. The
 * store's mode says whether the window was produced locally or by the provider.
 */
export function recordBoundary(
  store: SessionStore,
  before: readonly Message[],
  after: readonly Message[],
  strategy: CompactionStrategy,
  reason: 'automatic' | 'manual',
): BoundaryInfo {
  return store.recordCompaction({
    before,
    after,
    mode: strategy === 'local' ? 'local' : 'provider',
    reason,
    strategy,
  });
}
