import type { CommandContext } from './command.js';
import { UserError } from '../core/errors.js';
import type { RunFlags } from './run-options.js';
import { resolvePath } from './run-options.js';
import { createEstimator, type Estimator } from '../estimate/estimator.js';
import {
  createProviderClients,
  resolveRoute,
  RouteError,
  httpLimits,
  type HttpLimits,
  type HttpOptions,
  type NativeInlineClient,
  type NativeStandaloneClient,
  type StrategyChoice,
  type SummaryClient,
} from '../providers/index.js';
// The offline defaults (32,000-token window, abstract band cap) are the library's, so CLI and API agree.
import { OFFLINE_CONTEXT_WINDOW } from '../session/index.js';
import { createOfflineSummarizer, OFFLINE_MODEL, OFFLINE_PROVIDER } from '../summary/index.js';

/** A route ready to run: the S1 strategy, its clients and the facts the report prints. */
export interface RunRoute {
  /** Name the user chose (`offline`, `openai`, `ollama` …). */
  label: string;
  /** Provider kind (`offline` for the embedded route). */
  kind: string;
  model: string;
  baseUrl: string | null;
  /** Summary wire protocol (`chat`, `responses`, `messages`); null for offline. */
  wire: string | null;
  /** Env var the key came from (safe to print), when any. */
  apiKeyEnv: string | null;
  /** Model context window from the catalog (or the offline default); null when unknown. */
  contextWindow: number | null;
  /** The token estimator of the run: config `encoding`, else the model's encoding. */
  estimator: Estimator;
  strategy: StrategyChoice;
  /** Provider time limits in force (null for offline: no network). */
  http: HttpLimits | null;
  summary: SummaryClient;
  standalone?: NativeStandaloneClient;
  inline?: NativeInlineClient;
  supportsContextEdits: boolean;
}

/**
 * Resolves `--provider/--model/--base-url/--api-key-env/--catalog` (flags over config
 * `provider`) into a {@link RunRoute}. `offline` (the default) needs no network or key.
 * Route problems (unknown provider, missing key or base URL, bad catalog) become a one-line
 * {@link UserError} (exit 2) that names the env var but never holds a key.
 */
export function resolveRunRoute(
  command: string,
  flags: RunFlags,
  ctx: CommandContext,
  http: HttpOptions = {},
): RunRoute {
  const estimatorFor = (encoding: 'o200k_base' | 'cl100k_base') =>
    createEstimator({ encoding: ctx.config.encoding ?? encoding });
  const cfg = ctx.config.provider ?? {};
  const provider = (flags.provider ?? cfg.kind ?? OFFLINE_PROVIDER).trim().toLowerCase();
  if (provider === OFFLINE_PROVIDER) {
    for (const f of ['base-url', 'api-key-env', 'catalog'] as const)
      if (flags[f] !== undefined) throw new UserError(`${command}: --${f}: not used by the offline provider`);
    const estimator = estimatorFor('o200k_base');
    return {
      label: OFFLINE_PROVIDER,
      kind: OFFLINE_PROVIDER,
      model: flags.model ?? OFFLINE_MODEL,
      baseUrl: null,
      wire: null,
      apiKeyEnv: null,
      contextWindow: OFFLINE_CONTEXT_WINDOW,
      estimator,
      strategy: { kind: 'local', reason: 'the embedded offline summarizer is a Local route' },
      http: null,
      summary: createOfflineSummarizer({ estimator }),
      supportsContextEdits: false,
    };
  }
  const model = flags.model ?? cfg.model;
  if (model === undefined) throw new UserError(`${command}: --model is required for provider "${provider}"`);
  try {
    const route = resolveRoute(
      {
        provider,
        model,
        baseUrl: flags['base-url'] ?? cfg.baseUrl,
        apiKeyEnv: flags['api-key-env'] ?? cfg.apiKeyEnv,
        catalogFile: flags.catalog === undefined ? undefined : resolvePath(ctx, flags.catalog),
      },
      ctx.env,
    );
    const clients = createProviderClients(route, http);
    return {
      label: route.label,
      kind: route.kind,
      model: route.model,
      baseUrl: route.baseUrl,
      wire: route.wire,
      apiKeyEnv: route.apiKeyEnv ?? null,
      contextWindow: route.contextWindow ?? null,
      estimator: estimatorFor(route.encoding),
      strategy: clients.strategy,
      http: httpLimits(http),
      summary: clients.summary,
      ...(clients.standalone ? { standalone: clients.standalone } : {}),
      ...(clients.inline ? { inline: clients.inline } : {}),
      supportsContextEdits: route.supportsContextEdits,
    };
  } catch (e) {
    // The catalog does not know the embedded route; name it among the known providers.
    if (e instanceof RouteError)
      throw new UserError(`${command}: ${e.message.replace('(known: ', `(known: ${OFFLINE_PROVIDER}, `)}`);
    throw e;
  }
}
