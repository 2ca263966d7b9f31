import { z } from 'zod';
import { UserError } from '../../core/errors.js';
import { startServer, DEFAULT_PORT, type ServeOptions } from '../../serve/index.js';
import type { Command, CommandContext } from '../command.js';
import { CLEARING_OPTIONS, CLEARING_FLAG_SHAPE, clearingPolicyFrom } from '../clearing-flags.js';
import { flag, parseFlags } from '../flags.js';
import { RELIABILITY_FLAG_SHAPE, httpLimitsFrom } from '../reliability-flags.js';
import { resolvePath } from '../run-options.js';

const OPTIONS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'data-dir': { type: 'string' },
  'anthropic-upstream': { type: 'string' },
  'openai-upstream': { type: 'string' },
  capacity: { type: 'string' },
  'auth-token-env': { type: 'string' },
  summarizer: { type: 'string' },
  'max-body-bytes': { type: 'string' },
  timeout: { type: 'string' },
  retries: { type: 'string' },
  'retry-budget': { type: 'string' },
  ...CLEARING_OPTIONS,
} as const;

const url = z.url().refine((u) => /^https?:/.test(u), 'expected an http or https URL');

const ServeFlagsSchema = z.object({
  host: z.string().min(1).optional(),
  port: flag.nonNegInt.refine((n) => n <= 65_535, 'expected a port, 0 to 65535').optional(),
  'data-dir': z.string().min(1).optional(),
  'anthropic-upstream': url.optional(),
  'openai-upstream': url.optional(),
  capacity: flag.posInt.optional(),
  'auth-token-env': z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the name of an environment variable')
    .optional(),
  summarizer: z.enum(['upstream', 'offline']).optional(),
  'max-body-bytes': flag.posInt.optional(),
  timeout: RELIABILITY_FLAG_SHAPE.timeout,
  retries: RELIABILITY_FLAG_SHAPE.retries,
  'retry-budget': RELIABILITY_FLAG_SHAPE['retry-budget'],
  ...CLEARING_FLAG_SHAPE,
});
type ServeFlags = z.infer<typeof ServeFlagsSchema>;

const HELP = `Usage: compactor serve [flags]

A context-compacting HTTP proxy. Point an agent at it instead of the provider's API: it keeps
each conversation in a session, fits every request to the model's window (clearing old tool
results, compacting when needed) and forwards it with the client's own credentials.

  ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude -p "…"
  OPENAI_BASE_URL=http://127.0.0.1:8787/v1 codex exec "…"

Serves POST /v1/messages (Anthropic), /v1/chat/completions and /v1/responses (OpenAI),
streaming or not; every other path goes upstream unchanged. GET /metrics (Prometheus) and
GET /compactor/sessions/ID show what happened.

Flags (config "serve" has the same keys in camelCase; flags win):
  --host HOST                 address to listen on (default 127.0.0.1: this machine only)
  --port N                    port (default ${DEFAULT_PORT}; 0 takes a free one)
  --data-dir DIR              store each session under DIR (default: in memory only)
  --anthropic-upstream URL    default $ANTHROPIC_BASE_URL, else https://api.anthropic.com
  --openai-upstream URL       default $OPENAI_BASE_URL, else https://api.openai.com/v1
  --capacity N                the window every request is fitted to (default: the catalog's
                              window for the request's model; unknown models pass unchanged)
  --auth-token-env NAME       clients must send the value of $NAME in x-compactor-token
  --summarizer NAME           who writes summaries: upstream (default: the request's own
                              model through its upstream, with the client's credentials)
                              or offline (the embedded summarizer, no provider calls)
  --max-body-bytes N          largest request body accepted (default 32 MiB)
  --timeout SECONDS           one upstream request may take this long (default 120)
  --retries N                 retries of a failed upstream request: resets, 429, 5xx (default 3)
  --retry-budget SECONDS      all attempts of one request together (default 300)

Clearing (config "preset" and "toolResultClearing"), as for compactor run:
  --preset NAME, --keep-tool-uses N, --keep-recent-batches N, --no-clear-inputs, --no-clearing,
  --clear-at-least N and the compaction wait flags (see compactor run --help)

When it is ready it prints one line on stderr: compactor: serving on http://HOST:PORT
(with --json also {"url": "http://HOST:PORT"} on stdout).
Ctrl-C or SIGTERM stops taking requests, finishes the ones in flight, then exits.`;

/** The server's options: flags over config "serve" (and the clearing settings of run). */
function serveOptions(flags: ServeFlags, ctx: CommandContext): ServeOptions {
  const c = ctx.config.serve ?? {};
  const tokenEnv = flags['auth-token-env'] ?? c.authTokenEnv;
  const token = tokenEnv === undefined ? undefined : ctx.env[tokenEnv];
  if (tokenEnv !== undefined && (token === undefined || token === ''))
    throw new UserError(`serve: --auth-token-env: the environment variable ${tokenEnv} is not set`);
  const dataDir = flags['data-dir'] ?? c.dataDir;
  const policy = clearingPolicyFrom(flags, ctx);
  const pick = <T>(a: T | undefined, b: T | undefined) => a ?? b;
  const o: ServeOptions = {
    host: pick(flags.host, c.host),
    port: pick(flags.port, c.port),
    dataDir: dataDir === undefined ? undefined : resolvePath(ctx, dataDir),
    anthropicUpstream: pick(flags['anthropic-upstream'], c.anthropicUpstream),
    openaiUpstream: pick(flags['openai-upstream'], c.openaiUpstream),
    capacity: pick(flags.capacity, c.capacity),
    authToken: token,
    summarizer: pick(flags.summarizer, c.summarizer),
    maxBodyBytes: pick(flags['max-body-bytes'], c.maxBodyBytes),
    http: httpLimitsFrom(flags, ctx.config),
    env: ctx.env,
    session: Object.keys(policy).length > 0 ? { policy } : {},
  };
  // Unset keys are left out rather than passed as undefined.
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as ServeOptions;
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
    const server = await startServer(serveOptions(flags, ctx)).catch((e: unknown) => {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES' || err.code === 'EADDRNOTAVAIL')
        throw new UserError(`serve: cannot listen there (${err.code}): ${err.message}`);
      throw e;
    });
    ctx.stderr.write(`compactor: serving on ${server.url}\n`);
    if (args.values.json === true) ctx.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
    // Runs until Ctrl-C or SIGTERM; then requests in flight finish before the process ends.
    await new Promise<void>((resolve) => {
      if (ctx.signal === undefined) return;
      if (ctx.signal.aborted) resolve();
      else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    ctx.stderr.write('compactor: stopping: no new requests; finishing those in flight\n');
    await server.close();
    ctx.stderr.write('compactor: stopped serving\n');
    return 0;
  },
};
