import { z } from 'zod';
import type { LoopGuardPolicy } from '../../machines/index.js';
import { parseOptions } from '../core/parse-options.js';
import { HistoryOptionSchema } from './history-schema.js';
import type { Estimator } from '../estimate/estimator.js';
import { JsonSchema, type Message } from '../messages/message.js';
import {
  CLEARING_PRESET_NAMES,
  ClearingPolicyOptionsSchema,
  COMPACTION,
  LIMITS,
  type ClearingPolicy,
  type ClearingPresetName,
  type CompactionSettings,
  type SessionLimits,
} from '../projection/index.js';
import type { HttpOptions } from '../providers/http.js';
import { HttpOptionsSchema } from '../providers/http-limits.js';
import type { NativeInlineClient, NativeStandaloneClient, SummaryClient } from '../providers/types.js';
import type { Clock, InspectOption } from '../runtime/index.js';
import type { LockOptions, SessionStoreSource } from '../store/index.js';
import type { CacheHealthOptions } from './cache-health.js';
import type { RequestEnvelope } from './parent-context.js';
import type { RouteOptions } from './route.js';
import { ROUTE } from '../providers/route-settings.js';

export type { CompactionSettings, SessionLimits };

/** Options of `createCompactorSession`. */
export interface CompactorSessionOptions {
  /** Summary/compaction route (default `{ provider: 'offline' }`). */
  route?: RouteOptions;
  /** Token limits (see `LIMITS`). */
  limits?: SessionLimits;
  /**
   * Clearing preset: `compactor` (the defaults) or `vtcode` (VT Code's own defaults); the
   * same as `policy.preset`, which wins when both are given.
   */
  preset?: ClearingPresetName;
  /** Tool-result clearing policy; missing fields take the preset's values (see `CLEARING`). */
  policy?: Partial<ClearingPolicy>;
  /** Compaction tuning, the explicit threshold included (see `COMPACTION`). */
  compaction?: CompactionSettings;
  /** Two-band local summaries (abstract of the older part, detail of the newer). */
  hierarchical?: boolean;
  /** The active request envelope (parent context for summaries, prefix tokens); see `session.setEnvelope`. */
  envelope?: RequestEnvelope;
  /** Durable store directory: history is loaded from it and every change is written to it. */
  sessionDir?: string;
  /**
   * Where the session's records live when not in a `sessionDir`: a store source such as
   * `memoryStore()` or `restateStore(...)` from `context-compactor/restate`.
   */
  store?: SessionStoreSource;
  /** How the session waits when another writer holds `sessionDir` (default: fail at once, naming it). */
  storeLock?: LockOptions;
  /**
   * With `sessionDir`: move a session already stored there to `previous/<time>/` and start a
   * new one (default false: the stored session is continued).
   */
  startOver?: boolean;
  /**
   * With `sessionDir`: `immediate` (default) writes every message the session adds at once;
   * `onSuccess` holds them back until a turn or compaction succeeds (and its `beforeCommit`
   * returns), then commits them with its boundary, so a failed run leaves the directory as it
   * was. `close()` drops messages still held back.
   */
  storeWrites?: 'immediate' | 'onSuccess';
  /**
   * Initial history (validated). With a `sessionDir` that holds a session it must start with
   * the messages recorded there: the session is continued and only the rest is added.
   */
  history?: readonly Message[];
  /** Token estimator (default: the route's encoding). */
  estimator?: Estimator;
  /** XState inspection observer for every machine run (see src/runtime/inspection.ts). */
  inspect?: InspectOption;
  /**
   * Time limits of provider calls (validated): `timeoutMs` per request (default 120,000),
   * `retries` after the first attempt (default 3), `retryBudgetMs` for all attempts of one
   * call (default 300,000); `onWaiting` hears every `progressIntervalMs` (default 15,000)
   * while a request is in flight. Abort a turn with its `signal`.
   */
  http?: HttpOptions;
  cacheHealth?: CacheHealthOptions;
  loopGuardPolicy?: Partial<LoopGuardPolicy>;
  clock?: Clock;
  /** Debug log for the bounded, secret-redacted failure chain. */
  log?: (line: string) => void;
  /**
   * Summarizes with this client instead of the route's (a framework model wrapped by an
   * adapter, for example): the strategy is then Local and the route only names the window.
   */
  summarizer?: SummaryClient;
  /**
   * With `summarizer`: compacts through this native endpoint client first (a proxy calling its
   * client's provider with the client's credentials); a failed native pass falls back to `summarizer`.
   */
  standalone?: NativeStandaloneClient;
  /**
   * With `summarizer`: compacts inside one generate request of this client first (a proxy in
   * front of Anthropic with its client's credentials); a failed native pass falls back to `summarizer`.
   */
  inline?: NativeInlineClient;
}

const ToolSchemaSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().optional(),
  parameters: z.unknown().optional(),
  native: z.strictObject({ wire: z.enum(['chat', 'responses', 'messages']), tool: JsonSchema }).optional(),
});

/** Zod schema of the plain-data part of {@link CompactorSessionOptions}. */
export const SessionOptionsSchema = z.object({
  route: ROUTE.schema.required({ provider: true }).optional(),
  limits: LIMITS.schema.optional(),
  preset: z.enum(CLEARING_PRESET_NAMES).optional(),
  policy: ClearingPolicyOptionsSchema.optional(),
  compaction: COMPACTION.schema.optional(),
  hierarchical: z.boolean().optional(),
  envelope: z
    .strictObject({
      provider: z.string().min(1).optional(),
      wire: z.enum(['chat', 'responses', 'messages']).optional(),
      model: z.string().min(1),
      system: z.string().optional(),
      tools: z.array(ToolSchemaSchema).optional(),
      requestFields: z.record(z.string(), JsonSchema).optional(),
    })
    .refine((e) => e.provider !== undefined || e.wire !== undefined, 'expected a provider or a wire')
    .optional(),
  sessionDir: z.string().min(1).optional(),
  store: z
    .custom<SessionStoreSource>(
      (v) => typeof v === 'object' && v !== null && typeof (v as SessionStoreSource).open === 'function',
      'expected a session store source with an open(options) method',
    )
    .optional(),
  startOver: z.boolean().optional(),
  storeWrites: z.enum(['immediate', 'onSuccess']).optional(),
  http: HttpOptionsSchema.optional(),
  history: HistoryOptionSchema.optional(),
  summarizer: z
    .custom<SummaryClient>(
      (v) => typeof v === 'object' && v !== null && typeof (v as SummaryClient).summarize === 'function',
      'expected a summary client with a summarize(request) method',
    )
    .optional(),
  standalone: z
    .custom<NativeStandaloneClient>(
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        typeof (v as NativeStandaloneClient).compactStandalone === 'function',
      'expected a native compaction client with a compactStandalone(request) method',
    )
    .optional(),
  inline: z
    .custom<NativeInlineClient>(
      (v) =>
        typeof v === 'object' && v !== null && typeof (v as NativeInlineClient).compactInline === 'function',
      'expected a native compaction client with a compactInline(request) method',
    )
    .optional(),
});

/** Parses `value` with `schema`, or throws a one-line `CompactorOptionsError` naming `where` and the field. */
export const parseOrThrow = parseOptions;
