import { existsSync, statSync } from 'node:fs';
import type { CommandContext } from './command.js';
import { UserError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { counterFor } from '../estimate/counters.js';
import { createEstimator } from '../estimate/estimator.js';
import { requestEnvelopeOf, type ImportedSession } from '../formats/index.js';
import { RouteError } from '../core/errors.js';
import {
  checkRouteProvider,
  createCompactorSession,
  StoredSessionConflictError,
  type CompactorSession,
  type CompactorSessionOptions,
  ROUTE,
  ROUTE_SETTINGS,
  type RouteOptions,
} from '../session/index.js';
import { OFFLINE_PROVIDER } from '../summary/index.js';
import { createRunInspection, type RunInspection } from './run-inspection.js';
import { inspectTarget, resolvePath, type RunFlags } from './run-options.js';
import { settingsFrom } from './settings-flags.js';
import { storeOptionsFrom } from './reliability-flags.js';
import { progressIntervalMs, waitingLine } from './progress.js';

/** A session built from `run`/`compact` flags, plus the CLI's own progress and inspection sinks. */
export interface RunSession {
  session: CompactorSession;
  inspection: RunInspection;
  /** The settings the session was given (flags over config). */
  settings: Pick<CompactorSessionOptions, 'limits' | 'policy' | 'compaction'>;
  /** The `--session-dir` directory (resolved), or null. */
  sessionDir: string | null;
  /** Stops progress and inspection, closes the store (idempotent). */
  close(): void;
}

/**
 * Builds the one {@link CompactorSession} a `run` or `compact` drives: the route from flags
 * over config `provider`, limits and clearing from flags over config, the input file's
 * request envelope (the session decides whether it may be reused), the input's messages
 * as history, and `--session-dir` as the store: a session already there is continued
 * unless `--new`, and nothing is committed until the run succeeds. Flag, route and
 * store problems are one-line errors (exit 2).
 */
export function openRunSession(
  command: string,
  flags: RunFlags,
  ctx: CommandContext,
  input: ImportedSession,
): RunSession {
  const sessionDir =
    flags['session-dir'] === undefined ? null : sessionDirFrom(command, ctx, flags['session-dir']);
  const inspection = createRunInspection(command, ctx, inspectTarget(command, flags, ctx) ?? null);
  const settings = sessionSettingsFrom(flags, ctx);
  const options: CompactorSessionOptions = {
    route: routeFrom(command, flags, ctx),
    ...(ctx.config.encoding ? { estimator: createEstimator({ encoding: ctx.config.encoding }) } : {}),
    ...settings,
    hierarchical: flags.hierarchical === true,
    envelope: requestEnvelopeOf(input),
    history: input.messages,
    ...(sessionDir ? { sessionDir, storeWrites: 'onSuccess', ...storeOptionsFrom(flags, ctx.stderr) } : {}),
    inspect: (event) => inspection.observe(event),
    http: httpOptionsFrom(flags, ctx, inspection),
  };
  let session: CompactorSession;
  try {
    session = createCompactorSession(options);
  } catch (e) {
    void inspection.close();
    throw cliError(command, e);
  }
  return {
    session,
    inspection,
    settings,
    sessionDir,
    close() {
      void inspection.close();
      session.close();
    },
  };
}

/**
 * Loads the tokenizer the run will count with when it is known before the route is built (the
 * configured encoding, or the offline provider's default), so it is loaded before the input is
 * read: a 100,000-message run then peaked about 15 MB lower. Provider
 * routes take their encoding from the model catalog and load it later, as before.
 */
export function loadRunTokenizer(flags: RunFlags, ctx: CommandContext): void {
  const given = { ...ROUTE.fromConfig(ctx.config.provider), ...ROUTE.fromFlags(flags) };
  const provider = (given.provider ?? OFFLINE_PROVIDER).trim().toLowerCase();
  const encoding = ctx.config.encoding ?? (provider === OFFLINE_PROVIDER ? 'o200k_base' : undefined);
  if (encoding !== undefined) counterFor(encoding);
}

/** Provider time limits (flags over config) and where retries and long waits are reported. */
function httpOptionsFrom(
  flags: RunFlags,
  ctx: CommandContext,
  inspection: RunInspection,
): CompactorSessionOptions['http'] {
  const interval = progressIntervalMs(ctx.env);
  const progress = inspection.progress;
  return {
    ...settingsFrom(flags, ctx.config).http,
    onRetry: (note) => progress.note(`retrying: ${redactSecrets(note, ctx.env)}`),
    // A terminal shows the wait on the progress line; a pipe or log file gets a line each time.
    onWaiting: (w) =>
      ctx.stderrIsTTY ? progress.note(waitingLine(w)) : ctx.stderr.write(`compactor: ${waitingLine(w)}\n`),
    ...(interval === undefined ? {} : { progressIntervalMs: interval }),
  };
}

/** The session's errors in the words of the command's flags. */
function cliError(command: string, e: unknown): unknown {
  if (RouteError.isInstance(e)) return new UserError(`${command}: ${e.message}`);
  if (StoredSessionConflictError.isInstance(e))
    return new UserError(
      `${command}: --session-dir: ${e.dir} ${e.problem}${
        e.problem.startsWith('already')
          ? '; pass --new to start over there'
          : ' (use a new or empty directory)'
      }`,
    );
  return e;
}

function sessionDirFrom(command: string, ctx: CommandContext, flag: string): string {
  const dir = resolvePath(ctx, flag);
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new UserError(`${command}: --session-dir: ${dir} is not a directory`);
  return dir;
}

/** The route flags over config `provider` (offline by default). */
function routeFrom(command: string, flags: RunFlags, ctx: CommandContext): RouteOptions {
  const fromFlags = ROUTE.fromFlags(flags);
  const given = { ...ROUTE.fromConfig(ctx.config.provider), ...fromFlags };
  const provider = (given.provider ?? OFFLINE_PROVIDER).trim().toLowerCase();
  const catalog = given.catalogFile === undefined ? undefined : resolvePath(ctx, given.catalogFile);
  if (provider === OFFLINE_PROVIDER) {
    for (const f of ['baseUrl', 'apiKeyEnv', 'catalogFile'] as const)
      if (fromFlags[f] !== undefined) {
        const flag = ROUTE_SETTINGS[f].flag.name;
        throw new UserError(`${command}: --${flag}: not used by the offline provider`);
      }
    return { provider, ...(fromFlags.model !== undefined ? { model: fromFlags.model } : {}) };
  }
  if (given.model === undefined) {
    // A misspelt provider is the thing to fix first: name it and the known ones before asking for a model.
    try {
      checkRouteProvider(provider, catalog);
    } catch (e) {
      throw cliError(command, e);
    }
    throw new UserError(`${command}: --model is required for provider "${provider}"`);
  }
  const route: RouteOptions = { provider, model: given.model, env: ctx.env };
  if (given.baseUrl !== undefined) route.baseUrl = given.baseUrl;
  if (given.apiKeyEnv !== undefined) route.apiKeyEnv = given.apiKeyEnv;
  if (catalog !== undefined) route.catalogFile = catalog;
  return route;
}

/**
 * Limits, clearing policy and compaction tuning: each table's flags over its config section,
 * passed to the session as they are. The prompt prefix defaults to 0 (the file's own system
 * messages count as history, not as a prefix).
 */
function sessionSettingsFrom(
  flags: RunFlags,
  ctx: CommandContext,
): Pick<CompactorSessionOptions, 'limits' | 'policy' | 'compaction'> {
  const { limits, policy, compaction } = settingsFrom(flags, ctx.config);
  return { limits: { prefixTokens: 0, ...limits }, policy, compaction };
}
