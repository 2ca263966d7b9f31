import { z } from 'zod';
import { UserError } from '../../core/errors.js';
import { COMPACTION } from '../../projection/index.js';
import { HTTP } from '../../providers/http-limits.js';
import { startServer, type ServeOptions } from '../../serve/index.js';
import { SERVE } from '../../serve/settings.js';
import type { Command, CommandContext } from '../command.js';
import { parseFlags } from '../flags.js';
import { resolvePath } from '../run-options.js';
import { CLEARING_FLAG_SHAPE, CLEARING_HELP, CLEARING_OPTIONS, settingsFrom } from '../settings-flags.js';

/** The proxy's own flags, then those it shares with `compactor run`: clearing, compaction and time limits. */
const OPTIONS = {
  ...SERVE.flagOptions,
  ...HTTP.flagOptions,
  ...CLEARING_OPTIONS,
  ...COMPACTION.flagOptions,
} as const;

/** zod schema of {@link OPTIONS}: each flag's text read and checked by its row; errors name the flag. */
export const ServeFlagsSchema = z.object({
  ...SERVE.flagShape,
  ...HTTP.flagShape,
  ...CLEARING_FLAG_SHAPE,
  ...COMPACTION.flagShape,
});
type ServeFlags = z.infer<typeof ServeFlagsSchema>;

const HELP = `Usage: compactor serve [flags]

A context-compacting HTTP proxy. Point an agent at it instead of the provider's API: it keeps
each conversation in a session, fits every request to the model's window (clearing old tool
results, compacting when needed) and forwards it with the client's own credentials.

  ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude -p "…"
  codex exec -c openai_base_url=http://127.0.0.1:8787/v1 "…"    (Codex reads no OPENAI_BASE_URL)
  GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8787 gemini -p "…"

Serves POST /v1/messages (Anthropic), /v1/chat/completions and /v1/responses (OpenAI) and
/v1beta/models/MODEL:generateContent, :streamGenerateContent and :countTokens (Gemini),
streaming or not. Every other path goes unchanged to the upstream of its own protocol only
(Gemini's /v1beta/… to the Gemini upstream); a path no upstream serves gets a 404.
GET /metrics (Prometheus) and GET /compactor/sessions/ID show what happened.

Flags (config "serve" has the same keys in camelCase; flags win):
${SERVE.help(26)}

Upstream time limits (config "http"):
${HTTP.help(26)}

Clearing (config "preset" and "toolResultClearing"), as for compactor run. The proxy's own
defaults differ from the ones shown below (which are run's): it clears in steps, so the prompt
cache keeps hitting. Each request repeats the one sent before and adds the new messages (results
cleared then stay cleared, with the same text); only when a request reaches the compaction
threshold does one step clear every old tool result but the newest call's:
${CLEARING_HELP}

Compaction (config "compaction"), as for compactor run:
${COMPACTION.help(26)}

When it is ready it prints one line on stderr: compactor: serving on http://HOST:PORT
(with --json also {"url": "http://HOST:PORT"} on stdout). Then one line per request that is
refused, passed through, fails or is projected (its session, tokens before -> after, and any
clearing, compaction with its strategy, or output limit lowered); never a credential.
Ctrl-C or SIGTERM stops taking requests, finishes the ones in flight, then exits.`;

/** The server's options: each table's flags over its config section (clearing and compaction as for run). */
export function serveOptions(flags: ServeFlags, ctx: CommandContext): ServeOptions {
  const { authTokenEnv, dataDir, catalog, ...given } = {
    ...SERVE.fromConfig(ctx.config.serve),
    ...SERVE.fromFlags(flags),
  };
  const token = authTokenEnv === undefined ? undefined : ctx.env[authTokenEnv];
  if (authTokenEnv !== undefined && (token === undefined || token === ''))
    throw new UserError(`serve: --auth-token-env: the environment variable ${authTokenEnv} is not set`);
  const { policy, compaction, http } = settingsFrom(flags, ctx.config);
  return {
    ...given,
    ...(dataDir !== undefined ? { dataDir: resolvePath(ctx, dataDir) } : {}),
    ...(catalog !== undefined ? { catalog: resolvePath(ctx, catalog) } : {}),
    ...(token !== undefined ? { authToken: token } : {}),
    http,
    env: ctx.env,
    session: {
      ...(Object.keys(policy).length > 0 ? { policy } : {}),
      ...(Object.keys(compaction).length > 0 ? { compaction } : {}),
    },
  };
}

/** How long a log line may wait for others to be written with it. */
const LOG_BATCH_MS = 50;

/** A log that gathers lines and writes them together, at most {@link LOG_BATCH_MS} after the first. */
function batchedLines(write: (text: string) => void): ((line: string) => void) & { flush(): void } {
  let lines: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (lines.length === 0) return;
    const text = lines.join('');
    lines = [];
    write(text);
  };
  const log = (line: string) => {
    lines.push(`compactor: ${line}\n`);
    timer ??= setTimeout(flush, LOG_BATCH_MS);
  };
  return Object.assign(log, { flush });
}

export const command: Command = {
  name: 'serve',
  help: HELP,
  options: OPTIONS,
  abortable: true,
  async run(args, ctx) {
    const flags = parseFlags('serve', ServeFlagsSchema, args.values);
    if (args.positionals.length > 0)
      throw new UserError(`serve: takes no arguments (got "${args.positionals[0]}")`);
    // One line per request for the operator, on stderr like the start and stop lines. Lines are
    // written a few at a time: a write to a pipe holds the whole process until the reader
    // takes it, so one per request would make every client wait on the log's reader.
    const log = batchedLines((text) => ctx.stderr.write(text));
    const server = await startServer({ ...serveOptions(flags, ctx), log }).catch((e: unknown) => {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES' || err.code === 'EADDRNOTAVAIL')
        throw new UserError(`serve: cannot listen there (${err.code}): ${err.message}`);
      throw e;
    });
    for (const notice of server.notices) ctx.stderr.write(`compactor: ${notice}\n`);
    ctx.stderr.write(`compactor: serving on ${server.url}\n`);
    if (args.values.json === true) ctx.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
    // Runs until Ctrl-C or SIGTERM; then requests in flight finish before the process ends.
    await new Promise<void>((resolve) => {
      if (ctx.signal === undefined) return;
      if (ctx.signal.aborted) resolve();
      else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    log.flush();
    ctx.stderr.write('compactor: stopping: no new requests; finishing those in flight\n');
    await server.close();
    log.flush();
    ctx.stderr.write('compactor: stopped serving\n');
    return 0;
  },
};
