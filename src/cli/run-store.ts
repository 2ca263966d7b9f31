import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { CommandContext } from './command.js';
import { UserError } from '../core/errors.js';
import { resolvePath } from './run-options.js';
import { writeFileAtomic } from '../io/atomic-write.js';
import { checkOutputPath } from '../io/output-path.js';
import { fsError } from '../io/fs-errors.js';
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
  input: { path: string; format: FormatName; sessionDirs?: string[] },
): OutTarget | null {
  const format = to === undefined ? defaultExportFormat(input.format) : parseExportFormat(to);
  if (out === undefined) return null;
  const path = resolvePath(ctx, out);
  checkOutputPath(`${command}: --out`, path, { inputs: [input.path], sessionDirs: input.sessionDirs });
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
    throw fsError(target.path, 'write output', e);
  }
}

/** A session directory opened for one run. */
export interface RunStore {
  store: SessionStore;
  dir: string;
  /** The turn checkpoint the runner rewrites after every step (R2; resumable). */
  checkpointPath: string;
  /** The history the turn runs on: the stored live history plus the input's new messages. */
  history: Message[];
  /** Messages the directory already held (0 for a new session). */
  resumedFrom: number;
}

/**
 * Opens `--session-dir` for a run (R1). A new directory starts the session; one that holds
 * a session continues it when the input starts with every message it recorded (the same
 * session, grown since): only the new messages are appended, and the turn runs on the
 * stored live history (after earlier compactions). `startOver` (--new) moves the old
 * records aside first. New messages stay uncommitted until the caller commits, so a run
 * that fails or is killed before then leaves the directory as it was.
 */
export function openRunStore(
  command: string,
  ctx: CommandContext,
  dirFlag: string,
  messages: readonly Message[],
  options: { lock?: LockOptions; startOver?: boolean } = {},
): RunStore {
  const dir = resolvePath(ctx, dirFlag);
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new UserError(`${command}: --session-dir: ${dir} is not a directory`);
  const store = openSessionStore(dir, { lock: options.lock, startOver: options.startOver });
  try {
    const recorded = store.events().flatMap((e) => (e.type === 'message.appended' ? [e.message] : []));
    if (recorded.length === 0 && store.events().length === 0 && hasForeignFiles(dir))
      throw new UserError(
        `${command}: --session-dir: ${dir} holds other files and no session (use a new or empty directory)`,
      );
    const differs = recorded.findIndex((m, i) => i >= messages.length || !sameMessage(m, messages[i]!));
    if (differs >= 0)
      throw new UserError(
        `${command}: --session-dir: ${dir} already holds a different session (recorded message ${differs + 1} of ${recorded.length} is not in the input at that place); pass --new to start over there`,
      );
    store.appendMessages(messages.slice(recorded.length), { commit: false });
    return {
      store,
      dir,
      checkpointPath: join(dir, SNAPSHOTS_DIR, 'turn.json'),
      history: store.loadHistory(),
      resumedFrom: recorded.length,
    };
  } catch (e) {
    store.close();
    throw e;
  }
}

// Stored messages went through JSON and the schema; compare them as JSON values.
const asJson = (m: Message): unknown => JSON.parse(JSON.stringify(m));
function sameMessage(a: Message, b: Message): boolean {
  return isDeepStrictEqual(asJson(a), asJson(b));
}

/** Files other than the store's own layout and an inspection log. */
function hasForeignFiles(dir: string): boolean {
  const own = [
    'events.jsonl',
    'events.jsonl.corrupt',
    'artifacts',
    'snapshots',
    'inspect.jsonl',
    'lock',
    'previous',
  ];
  return readdirSync(dir).some((f) => !own.includes(f));
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
