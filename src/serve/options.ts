import { z } from 'zod';
import { UserError } from '../core/errors.js';
import { parseOptions } from '../core/parse-options.js';
import { HttpOptionsSchema, type HttpOptions } from '../providers/http-limits.js';
import { SessionOptionsSchema, type CompactorSessionOptions } from '../session/index.js';
import { SERVE, SERVE_DEFAULTS, type ServeSettings } from './settings.js';

/**
 * Options of {@link startServer}: the proxy's settings (the CLI's flags and config keys map onto
 * them one to one; the auth token is given by value here, by its variable's name there), and
 * what every session starts with.
 */
export interface ServeOptions extends Omit<ServeSettings, 'authTokenEnv'> {
  /** A token clients must send in `x-compactor-token` (the value, not the variable's name). */
  authToken?: string;
  /** Upstream time limits (default those of `compactor run`). */
  http?: HttpOptions;
  /** Environment the default upstreams are read from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Session settings every session starts with: clearing preset and policy, compaction tuning, limits. */
  session?: Pick<CompactorSessionOptions, 'preset' | 'policy' | 'compaction' | 'limits' | 'hierarchical'>;
  /**
   * Gets one line per refusal, passthrough and projected request (its session, tokens before
   * and after, what was done); `compactor serve` writes them to stderr. Never holds a secret.
   */
  log?: (line: string) => void;
}

const ServeOptionsSchema = SERVE.schema.omit({ authTokenEnv: true }).extend({
  authToken: z.string().min(1).optional(),
  http: HttpOptionsSchema.optional(),
  env: z.record(z.string(), z.string().optional()).optional(),
  session: z
    .strictObject({
      preset: SessionOptionsSchema.shape.preset,
      policy: SessionOptionsSchema.shape.policy,
      compaction: SessionOptionsSchema.shape.compaction,
      limits: SessionOptionsSchema.shape.limits,
      hierarchical: SessionOptionsSchema.shape.hierarchical,
    })
    .optional(),
  log: z.custom<(line: string) => void>((v) => typeof v === 'function', 'expected a function').optional(),
});

const ANTHROPIC_DEFAULT = 'https://api.anthropic.com';
const OPENAI_DEFAULT = 'https://api.openai.com/v1';
const GEMINI_DEFAULT = 'https://generativelanguage.googleapis.com';

/** Whether a listening address is this machine only (`127.0.0.0/8`, `::1`, `localhost`). */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return (
    h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h)
  );
}

/** The validated options with every default filled in. */
export interface ResolvedServeOptions {
  host: string;
  port: number;
  dataDir?: string;
  /** The Restate ingress sessions live behind (the `restate` engine), else undefined. */
  restateIngress?: string;
  anthropicUpstream: string;
  openaiUpstream: string;
  geminiUpstream: string;
  capacity?: number;
  authToken?: string;
  summarizer: 'upstream' | 'offline';
  catalog?: string;
  maxBodyBytes: number;
  http: ServeOptions['http'];
  session: NonNullable<ServeOptions['session']>;
  maxSessions: number;
  /** Bytes the open sessions may hold together (from `maxMemory` in MiB), else unbounded. */
  maxSessionBytes?: number;
  log?: (line: string) => void;
}

/** Validates {@link ServeOptions} (one-line error naming the field) and fills in the defaults. */
export function resolveServeOptions(options: ServeOptions): ResolvedServeOptions {
  // process.env is not a plain object, so it is copied before the record check.
  const o = parseOptions(
    ServeOptionsSchema,
    { ...options, ...(options.env ? { env: { ...options.env } } : {}) },
    'startServer: options',
  );
  const engine = o.engine ?? SERVE_DEFAULTS.engine;
  if (engine === 'restate' && o.restateIngress === undefined)
    throw new UserError(
      'startServer: options.restateIngress: the restate engine needs the ingress URL of a Restate server',
    );
  if (engine !== 'restate' && o.restateIngress !== undefined)
    throw new UserError('startServer: options.restateIngress: only used with engine "restate"');
  if (engine === 'restate' && o.dataDir !== undefined)
    throw new UserError(
      'startServer: options.dataDir: sessions live in Restate with engine "restate"; give one or the other',
    );
  const host = o.host ?? SERVE_DEFAULTS.host;
  if (!isLoopback(host) && o.authToken === undefined && !(o.allowOpen ?? SERVE_DEFAULTS.allowOpen))
    throw new UserError(
      `serve: --host ${host} lets every machine that reaches it use the proxy and the keys its clients send; give --auth-token-env NAME (or --allow-open when something in front checks who connects)`,
    );
  const env = o.env ?? process.env;
  const fromEnv = (name: string) => {
    const v = env[name];
    return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
  };
  return {
    host,
    port: o.port ?? SERVE_DEFAULTS.port,
    ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
    ...(o.restateIngress !== undefined ? { restateIngress: o.restateIngress } : {}),
    anthropicUpstream: o.anthropicUpstream ?? fromEnv('ANTHROPIC_BASE_URL') ?? ANTHROPIC_DEFAULT,
    openaiUpstream: o.openaiUpstream ?? fromEnv('OPENAI_BASE_URL') ?? OPENAI_DEFAULT,
    geminiUpstream: o.geminiUpstream ?? fromEnv('GOOGLE_GEMINI_BASE_URL') ?? GEMINI_DEFAULT,
    ...(o.capacity !== undefined ? { capacity: o.capacity } : {}),
    ...(o.authToken !== undefined ? { authToken: o.authToken } : {}),
    summarizer: o.summarizer ?? SERVE_DEFAULTS.summarizer,
    ...(o.catalog !== undefined ? { catalog: o.catalog } : {}),
    maxBodyBytes: o.maxBodyBytes ?? SERVE_DEFAULTS.maxBodyBytes,
    http: o.http,
    session: o.session ?? {},
    maxSessions: o.maxSessions ?? SERVE_DEFAULTS.maxSessions,
    ...(o.maxMemory !== undefined ? { maxSessionBytes: o.maxMemory * 1024 * 1024 } : {}),
    ...(o.log !== undefined ? { log: o.log } : {}),
  };
}
