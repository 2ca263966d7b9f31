import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { InspectionEvent } from 'xstate';
import type { CommandContext } from './command.js';
import { UserError } from '../core/errors.js';
import { checkOutputPath } from '../io/output-path.js';
import { createProgress, progressIntervalMs, waitingLine, type Progress } from './progress.js';
import { httpLimitsFrom } from './reliability-flags.js';
import { redactSecrets } from '../core/redact.js';
import {
  clearingPolicyFrom,
  inspectTarget,
  runLimitsFrom,
  type InspectTarget,
  type RunFlags,
} from './run-options.js';
import { parentContextFor, requestFieldsFor } from '../session/index.js';
import { requestEnvelopeOf } from '../formats/index.js';
import { resolveRunRoute, type RunRoute } from './run-route.js';
import type { ImportedSession } from '../formats/index.js';
import { resolveBudgets, type Budgets, type Limits } from '../projection/index.js';
import {
  createJsonlInspector,
  createLocalSummarizer,
  createStatelyInspector,
  createTurnRunner,
  type TurnRunner,
} from '../runtime/index.js';

/** Everything `run` and `compact` need to drive the machines. */
export interface RunSetup {
  runner: TurnRunner;
  route: RunRoute;
  limits: Limits;
  budgets: Budgets;
  progress: Progress;
  /** Where inspection events go (null when `--inspect` was not given). */
  inspect: InspectTarget | null;
  /** Starts `--inspect` (truncates the JSONL file, or starts the Stately server); call after the store is open. */
  startInspection(): Promise<void>;
  /** Stops the progress line and the Stately inspector (idempotent). */
  close(): void;
}

/** Options beyond the flags. */
export interface RunSetupOptions {
  /** `compact --instructions`: custom compaction instructions (Local prompt and O3). */
  instructions?: string;
  /** The session being run: its provider envelope may be reused (S2). */
  session?: ImportedSession;
}

/**
 * Resolves the route (exit 2 on route errors), the limits (flags over config, the route's
 * context window as the default capacity), the Local summarizer over the route's summary
 * client (with the session's parent envelope when provider and model match, S2), and inspection (progress on a terminal, JSONL or Stately), then builds the runner.
 */
export function setUpRun(
  command: string,
  flags: RunFlags,
  ctx: CommandContext,
  options: RunSetupOptions = {},
): RunSetup {
  const progress = createProgress(ctx.stderr, ctx.stderrIsTTY);
  const interval = progressIntervalMs(ctx.env);
  const route = resolveRunRoute(command, flags, ctx, {
    ...httpLimitsFrom(flags, ctx.config),
    onRetry: (note) => progress.note(`retrying: ${redactSecrets(note, ctx.env)}`),
    // A terminal shows the wait on the progress line; a pipe or log file gets a line each time.
    onWaiting: (w) =>
      ctx.stderrIsTTY ? progress.note(waitingLine(w)) : ctx.stderr.write(`compactor: ${waitingLine(w)}\n`),
    ...(interval === undefined ? {} : { progressIntervalMs: interval }),
  });
  const limits = runLimitsFrom(flags, ctx);
  limits.providerLimit ??= route.contextWindow ?? undefined;
  const policy = clearingPolicyFrom(flags, ctx);
  const budgets = resolveBudgets({
    ...limits,
    configuredTrigger: limits.configuredTrigger || policy.triggerTokens,
  });

  const target = inspectTarget(flags, ctx) ?? null;
  const observers: Array<(e: InspectionEvent) => void> = [progress.inspect];
  let stopStately: (() => void) | undefined;

  const envelope = fileEnvelope(options.session, route);
  const summarizer = createLocalSummarizer({
    client: route.summary,
    // S2: the fork leaves the leading system messages out; they travel as the frozen prefix.
    ...envelope,
    estimator: route.estimator,
    budgets,
    model: route.model,
    instructions: options.instructions,
    reinjectBudgetTokens: ctx.config.compaction?.reinjectBudgetTokens,
    reserveOutput: limits.reservedOutput,
    prefixTokens: limits.prefixTokens,
  });
  const runner = createTurnRunner({
    estimator: route.estimator,
    limits,
    policy,
    strategy: route.strategy.kind,
    hierarchical: flags.hierarchical === true,
    compaction: {
      summarizer,
      ...(route.standalone ? { standalone: route.standalone } : {}),
      ...(route.inline ? { inline: route.inline } : {}),
      instructions: options.instructions,
      // Inline requests carry the history's own system messages; only the tool catalog is added.
      ...(envelope.tools ? { tools: envelope.tools } : {}),
      ...(envelope.requestFields ? { requestFields: envelope.requestFields } : {}),
      supportsContextEdits: route.supportsContextEdits,
      secrets: route.apiKeyEnv ? [ctx.env[route.apiKeyEnv] ?? ''].filter((k) => k !== '') : [],
    },
    inspect: (event) => {
      for (const observe of observers) observe(event);
    },
  });

  let closed = false;
  return {
    runner,
    route,
    limits,
    budgets,
    progress,
    inspect: target,
    async startInspection() {
      if (target?.kind === 'jsonl') {
        try {
          mkdirSync(dirname(target.file), { recursive: true });
          writeFileSync(target.file, ''); // one run per log file
        } catch (e) {
          throw new UserError(
            `${command}: --inspect: cannot write ${target.file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
          );
        }
        // Values of secret env vars are redacted on every line, so the log never holds a key.
        observers.push(
          createJsonlInspector((line) =>
            writeFileSync(target.file, redactSecrets(line, ctx.env), { flag: 'a' }),
          ),
        );
      } else if (target?.kind === 'stately') {
        const stately = await createStatelyInspector();
        observers.push(stately.inspect);
        stopStately = () => stately.stop();
      }
    },
    close() {
      if (closed) return;
      closed = true;
      progress.done();
      stopStately?.();
    },
  };
}

/**
 * What the input file's request envelope lends the compaction requests, decided by the
 * session's one rule (S2: system and tools for the same wire and model; O1: request fields
 * for the same wire). Neither `run` nor `compact` is a model switch.
 */
function fileEnvelope(session: ImportedSession | undefined, route: RunRoute) {
  const envelope = session ? requestEnvelopeOf(session) : undefined;
  const target = { provider: route.kind, label: route.label, model: route.model, wire: route.wire };
  const requestFields = requestFieldsFor(envelope, target);
  return { ...parentContextFor(envelope, target, 'manual'), ...(requestFields ? { requestFields } : {}) };
}

/** `--inspect=FILE` may not replace an input or a store file (checked before any work). */
export function checkInspectPath(
  command: string,
  flags: RunFlags,
  ctx: CommandContext,
  inputs: string[],
  sessionDirs: string[],
): void {
  const target = inspectTarget(flags, ctx);
  if (target?.kind !== 'jsonl') return;
  // --inspect=jsonl goes into a session directory the run may be about to create.
  if (sessionDirs.includes(dirname(target.file)) && !existsSync(dirname(target.file))) return;
  checkOutputPath(`${command}: --inspect`, target.file, { inputs, sessionDirs });
}
