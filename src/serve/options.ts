import { z } from 'zod';
import { parseOptions } from '../core/parse-options.js';
import { HTTP_LIMITS_SHAPE } from '../providers/http-limits.js';
import { SessionOptionsSchema, type CompactorSessionOptions } from '../session/index.js';

/** Options of {@link startServer} (the CLI's flags and config keys map onto them one to one). */
export interface ServeOptions {
  /** Address to listen on (default 127.0.0.1: only this machine). */
  host?: string;
  /** Port (default 8787; 0 takes a free one). */
  port?: number;
  /** Where each session is stored (a directory per session); without it sessions live in memory only. */
  dataDir?: string;
  /** Anthropic Messages upstream (default `ANTHROPIC_BASE_URL`, else https://api.anthropic.com). */
  anthropicUpstream?: string;
  /** OpenAI upstream (default `OPENAI_BASE_URL`, else https://api.openai.com/v1). */
  openaiUpstream?: string;
  /** The window every request is fitted to; default the catalog's window for the request's model. */
  capacity?: number;
  /** A token clients must send in `x-compactor-token` (the value, not the variable's name). */
  authToken?: string;
  /**
   * Who writes summaries: `upstream` (default: the request's own model through its own
   * upstream, with the client's credentials) or `offline` (the embedded summarizer, no calls).
   */
  summarizer?: 'upstream' | 'offline';
  /** Largest request body accepted, in bytes (default 32 MiB). */
  maxBodyBytes?: number;
  /** Upstream time limits (default those of `compactor run`). */
  http?: { timeoutMs?: number; retries?: number; retryBudgetMs?: number };
  /** Environment the default upstreams are read from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Session settings every session starts with: clearing preset and policy, compaction tuning, limits. */
  session?: Pick<CompactorSessionOptions, 'preset' | 'policy' | 'compaction' | 'limits'>;
  /** How many sessions stay open in memory (default 1,000); idle ones beyond are closed (and reopened from `dataDir`). */
  maxSessions?: number;
}

const url = z.url().refine((u) => /^https?:/.test(u), 'expected an http or https URL');

const ServeOptionsSchema = z.strictObject({
  host: z.string().min(1).optional(),
  port: z.number().int().min(0).max(65_535).optional(),
  dataDir: z.string().min(1).optional(),
  anthropicUpstream: url.optional(),
  openaiUpstream: url.optional(),
  capacity: z.number().int().positive().optional(),
  authToken: z.string().min(1).optional(),
  summarizer: z.enum(['upstream', 'offline']).optional(),
  maxBodyBytes: z.number().int().positive().optional(),
  http: z.strictObject(HTTP_LIMITS_SHAPE).optional(),
  env: z.record(z.string(), z.string().optional()).optional(),
  session: z
    .strictObject({
      preset: SessionOptionsSchema.shape.preset,
      policy: SessionOptionsSchema.shape.policy,
      compaction: SessionOptionsSchema.shape.compaction,
      limits: SessionOptionsSchema.shape.limits,
    })
    .optional(),
  maxSessions: z.number().int().positive().optional(),
});

/** The port `compactor serve` listens on unless told otherwise. */
export const DEFAULT_PORT = 8787;
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;
const ANTHROPIC_DEFAULT = 'https://api.anthropic.com';
const OPENAI_DEFAULT = 'https://api.openai.com/v1';

/** The validated options with every default filled in. */
export interface ResolvedServeOptions {
  host: string;
  port: number;
  dataDir?: string;
  anthropicUpstream: string;
  openaiUpstream: string;
  capacity?: number;
  authToken?: string;
  summarizer: 'upstream' | 'offline';
  maxBodyBytes: number;
  http: ServeOptions['http'];
  session: NonNullable<ServeOptions['session']>;
  maxSessions?: number;
}

/** Validates {@link ServeOptions} (one-line error naming the field) and fills in the defaults. */
export function resolveServeOptions(options: ServeOptions): ResolvedServeOptions {
  // process.env is not a plain object, so it is copied before the record check.
  const o = parseOptions(
    ServeOptionsSchema,
    { ...options, ...(options.env ? { env: { ...options.env } } : {}) },
    'startServer: options',
  );
  const env = o.env ?? process.env;
  const fromEnv = (name: string) => {
    const v = env[name];
    return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
  };
  return {
    host: o.host ?? '127.0.0.1',
    port: o.port ?? DEFAULT_PORT,
    ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
    anthropicUpstream: o.anthropicUpstream ?? fromEnv('ANTHROPIC_BASE_URL') ?? ANTHROPIC_DEFAULT,
    openaiUpstream: o.openaiUpstream ?? fromEnv('OPENAI_BASE_URL') ?? OPENAI_DEFAULT,
    ...(o.capacity !== undefined ? { capacity: o.capacity } : {}),
    ...(o.authToken !== undefined ? { authToken: o.authToken } : {}),
    summarizer: o.summarizer ?? 'upstream',
    maxBodyBytes: o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    http: o.http,
    session: o.session ?? {},
    ...(o.maxSessions !== undefined ? { maxSessions: o.maxSessions } : {}),
  };
}
