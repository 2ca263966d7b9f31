import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { InspectionEvent } from 'xstate';
import type { CommandContext } from './command.js';
import { UserError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { checkOutputPath } from '../io/output-path.js';
import { PRIVATE_FILE } from '../io/private.js';
import { createJsonlInspector } from '../session/index.js';
import { openStatelyInspection } from './stately-inspection.js';
import { createProgress, type Progress } from './progress.js';
import { inspectTarget, type InspectTarget, type RunFlags } from './run-options.js';

/** Where the machines' inspection events go during `run` and `compact`: progress, JSONL, Stately. */
export interface RunInspection {
  progress: Progress;
  /** The `--inspect` target (null without the flag). */
  target: InspectTarget | null;
  /** Hand this to the session: it fans every event out to the sinks. */
  observe(event: InspectionEvent): void;
  /**
   * Opens `--inspect` (truncates the JSONL file, or starts the Stately relay, prints its
   * address and waits a bounded time for a viewer); call after the store is open.
   */
  start(): Promise<void>;
  /** Stops the progress line and the Stately relay, after sending it what is queued (idempotent). */
  close(): Promise<void>;
}

/** Progress on a terminal always; the `--inspect` sink once {@link RunInspection.start} runs. */
export function createRunInspection(
  command: string,
  ctx: CommandContext,
  target: InspectTarget | null,
): RunInspection {
  const progress = createProgress(ctx.stderr, ctx.stderrIsTTY);
  const observers: Array<(e: InspectionEvent) => void> = [progress.inspect];
  let stopStately: (() => Promise<void>) | undefined;
  let closed: Promise<void> | undefined;
  return {
    progress,
    target,
    observe(event) {
      for (const observe of observers) observe(event);
    },
    async start() {
      if (target?.kind === 'jsonl') observers.push(openJsonlLog(command, ctx, target.file));
      else if (target?.kind === 'stately') {
        const stately = await openStatelyInspection(command, ctx, target);
        observers.push(stately.inspect);
        stopStately = () => stately.stop();
      }
    },
    close() {
      if (closed) return closed;
      progress.done();
      closed = stopStately?.() ?? Promise.resolve();
      return closed;
    },
  };
}

/** One run per log file: the file starts empty; secret env values are redacted on every line. */
function openJsonlLog(command: string, ctx: CommandContext, file: string): (e: InspectionEvent) => void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    // The log holds the session's messages: readable by its owner only, as the store is.
    writeFileSync(file, '', { mode: PRIVATE_FILE });
  } catch (e) {
    throw new UserError(
      `${command}: --inspect: cannot write ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return createJsonlInspector((line) => writeFileSync(file, redactSecrets(line, ctx.env), { flag: 'a' }));
}

/** `--inspect=FILE` may not replace an input or a store file (checked before any work). */
export function checkInspectPath(
  command: string,
  flags: RunFlags,
  ctx: CommandContext,
  inputs: string[],
  sessionDirs: string[],
): void {
  const target = inspectTarget(command, flags, ctx);
  if (target?.kind !== 'jsonl') return;
  // --inspect=jsonl goes into a session directory the run may be about to create.
  if (sessionDirs.includes(dirname(target.file)) && !existsSync(dirname(target.file))) return;
  checkOutputPath(`${command}: --inspect`, target.file, { inputs, sessionDirs });
}
