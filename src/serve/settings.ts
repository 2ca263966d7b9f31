import { z } from 'zod';
import { defaultsOf, flagValue, settingsGroup, type SettingsOf } from '../core/settings.js';

/**
 * The proxy's own settings, one row each: `startServer`'s options, the config file's `serve`
 * section, the flags of `compactor serve` and their help all come from this table. Clearing,
 * compaction and provider time limits are the shared tables' (the same flags as `compactor run`).
 */

/** The port `compactor serve` listens on unless told otherwise. */
export const DEFAULT_PORT = 8787;
const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;
const DEFAULT_MAX_SESSIONS = 1_000;

const url = z.url().refine((u) => /^https?:/.test(u), 'expected an http or https URL');
const text = z.string();

/** The proxy's settings table: each row's schema, default, meaning and flag. */
export const SERVE_SETTINGS = {
  host: {
    schema: z.string().min(1, 'expected a host name or address'),
    default: '127.0.0.1',
    defaultText: '`127.0.0.1` (this machine only)',
    doc: 'Address the proxy listens on. Any other than this machine needs `authTokenEnv` (or `allowOpen`).',
    flag: {
      name: 'host',
      arg: 'HOST',
      parse: text,
      help: 'address to listen on (default 127.0.0.1: this machine only)',
    },
  },
  port: {
    schema: z.number().int().min(0).max(65_535, 'expected a port, 0 to 65535'),
    default: DEFAULT_PORT,
    defaultText: String(DEFAULT_PORT),
    doc: 'Port the proxy listens on; 0 takes a free one.',
    flag: {
      name: 'port',
      arg: 'N',
      parse: flagValue.nonNegInt,
      help: `port (default ${DEFAULT_PORT}; 0 takes a free one)`,
    },
  },
  dataDir: {
    schema: z.string().min(1, 'expected a directory'),
    defaultText: 'none: sessions live in memory only',
    doc: 'Directory each session is stored under (one directory per session), so sessions outlive the process.',
    flag: {
      name: 'data-dir',
      arg: 'DIR',
      parse: text,
      help: 'store each session under DIR (default: in memory only)',
    },
  },
  engine: {
    schema: z.enum(['local', 'restate']),
    default: 'local',
    doc: 'Where sessions live: `local` is this process (in memory, or under `dataDir`); `restate` a Restate server (one `compactorSession` object per session, reached through `restateIngress`), so a restarted or second proxy continues them.',
    flag: {
      name: 'engine',
      arg: 'NAME',
      parse: text,
      help: 'where sessions live: local (default: this process, or --data-dir) or restate (a Restate server, see --restate-ingress)',
    },
  },
  restateIngress: {
    schema: url,
    defaultText: 'none (needed with `engine: restate`)',
    doc: "The Restate server's ingress URL (e.g. `http://localhost:8080`) when `engine` is `restate`; a worker serving `compactorSession` must be registered with it.",
    flag: {
      name: 'restate-ingress',
      arg: 'URL',
      parse: text,
      help: "the Restate server's ingress, e.g. http://localhost:8080 (with --engine restate)",
    },
  },
  anthropicUpstream: {
    schema: url,
    defaultText: '`$ANTHROPIC_BASE_URL`, else https://api.anthropic.com',
    doc: 'Where Anthropic Messages requests go.',
    flag: {
      name: 'anthropic-upstream',
      arg: 'URL',
      parse: text,
      help: 'default $ANTHROPIC_BASE_URL, else https://api.anthropic.com',
    },
  },
  openaiUpstream: {
    schema: url,
    defaultText: '`$OPENAI_BASE_URL`, else https://api.openai.com/v1',
    doc: 'Where OpenAI Chat Completions and Responses requests go.',
    flag: {
      name: 'openai-upstream',
      arg: 'URL',
      parse: text,
      help: 'default $OPENAI_BASE_URL, else https://api.openai.com/v1',
    },
  },
  geminiUpstream: {
    schema: url,
    defaultText: '`$GOOGLE_GEMINI_BASE_URL`, else https://generativelanguage.googleapis.com',
    doc: 'Where Gemini API requests (`/v1beta/models/…:generateContent` and the rest of `/v1beta/…`) go.',
    flag: {
      name: 'gemini-upstream',
      arg: 'URL',
      parse: text,
      help: 'default $GOOGLE_GEMINI_BASE_URL, else https://generativelanguage.googleapis.com',
    },
  },
  capacity: {
    schema: z.number().int().positive(),
    defaultText: "the catalog's window for the request's model (unknown models pass unchanged)",
    doc: 'The window in tokens every request is fitted to.',
    flag: {
      name: 'capacity',
      arg: 'N',
      parse: flagValue.posInt,
      help: "the window every request is fitted to (default: the catalog's window for the request's model; unknown models pass unchanged)",
    },
  },
  authTokenEnv: {
    schema: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the name of an environment variable'),
    defaultText: 'none: no token asked for',
    doc: 'Environment variable holding a token clients must send in `x-compactor-token` (the library takes the value as `authToken`).',
    flag: {
      name: 'auth-token-env',
      arg: 'NAME',
      parse: text,
      help: 'clients must send the value of $NAME in x-compactor-token',
    },
  },
  allowOpen: {
    schema: z.boolean(),
    default: false,
    doc: 'Listen on an address other than this machine without `authTokenEnv`: anyone who reaches the port may use the proxy and the credentials its clients send. Only for a proxy behind something that checks who connects (a private container network, a reverse proxy with its own login).',
    flag: {
      on: 'allow-open',
      onHelp:
        'let a --host other than this machine serve without --auth-token-env (only behind something that checks who connects)',
    },
  },
  summarizer: {
    schema: z.enum(['upstream', 'offline']),
    default: 'upstream',
    doc: "Who compacts: `upstream` is the request's own model through its own upstream, with the client's credentials — natively (OpenAI `/responses/compact`, Anthropic's compact edit) where the catalog allows it for the model and upstream host, else a Local summary; `offline` the embedded summarizer, without provider calls.",
    flag: {
      name: 'summarizer',
      arg: 'NAME',
      parse: text,
      help: "who compacts: upstream (default: the request's own model through its upstream, with the client's credentials; natively where the catalog allows it, else a summary) or offline (the embedded summarizer, no provider calls)",
    },
  },
  catalog: {
    schema: z.string().min(1, 'expected a file'),
    defaultText: 'none: the bundled catalog',
    doc: 'Catalog file (JSON) over the bundled one; its `nativeHosts` let an upstream on another host compact natively.',
    flag: {
      name: 'catalog',
      arg: 'FILE',
      parse: text,
      help: "catalog file over the bundled one (e.g. nativeHosts: upstream hosts that serve the provider's native compaction)",
    },
  },
  maxBodyBytes: {
    schema: z.number().int().positive(),
    default: DEFAULT_MAX_BODY_BYTES,
    defaultText: '33,554,432 (32 MiB)',
    doc: 'Largest request body accepted, in bytes; a larger one is answered 413.',
    flag: {
      name: 'max-body-bytes',
      arg: 'N',
      parse: flagValue.posInt,
      help: 'largest request body accepted (default 32 MiB)',
    },
  },
  maxSessions: {
    schema: z.number().int().positive(),
    default: DEFAULT_MAX_SESSIONS,
    defaultText: '1,000',
    doc: 'How many sessions stay open in memory; beyond that the least recently used idle one is closed and forgets everything this process kept about it. With `dataDir` it is reopened from its store on its next request; without, it starts over.',
    flag: {
      name: 'max-sessions',
      arg: 'N',
      parse: flagValue.posInt,
      help: 'sessions kept open in memory (default 1,000); the least recently used idle one beyond is closed (reopened from --data-dir on its next request)',
    },
  },
  maxMemory: {
    schema: z.number().int().positive(),
    defaultText: 'none: only `maxSessions` bounds the sessions',
    doc: 'Memory the open sessions may hold together, in MiB, each counted at two bytes a character of its last request (the most the JavaScript engine takes for text; plain ASCII takes half). A quarter of it (at most 40 MiB) goes to the last bodies kept so that the next requests are read faster, otherwise held to 40 MiB. Beyond it the least recently used idle sessions are closed as beyond `maxSessions`. The process needs about 150 MiB besides (code, the tokenizer).',
    flag: {
      name: 'max-memory',
      arg: 'MIB',
      parse: flagValue.posInt,
      help: 'memory the open sessions may hold together, in MiB (counted at 2 bytes a character of their last request); the least recently used idle ones beyond are closed',
    },
  },
} as const;

/** The proxy's table and everything derived from it. */
export const SERVE = settingsGroup('Proxy server (compactor serve)', { section: 'serve' }, SERVE_SETTINGS);

/** The proxy's settings (all optional; see {@link SERVE_SETTINGS}). */
export type ServeSettings = Partial<SettingsOf<typeof SERVE_SETTINGS>>;

/** The defaults of the settings that have one. */
export const SERVE_DEFAULTS = defaultsOf(SERVE_SETTINGS) as Required<
  Pick<
    ServeSettings,
    'host' | 'port' | 'engine' | 'summarizer' | 'maxBodyBytes' | 'maxSessions' | 'allowOpen'
  >
>;
