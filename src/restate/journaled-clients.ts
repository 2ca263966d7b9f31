import {
  CompactorError,
  ContextCapacityError,
  EmptySummaryError,
  ProviderError,
  type ProviderErrorInfo,
} from '../core/errors.js';
import type { SessionRoute } from '../session/route.js';
import type { ObjectSharedContext } from './sdk.js';

/**
 * Every provider call of a session run inside a durable handler becomes one recorded step:
 * when the handler is retried (its worker died, the server restarted), a call that finished
 * is read back from the record instead of being sent (and paid) again. A failed call is
 * recorded too, so the retried run takes the same failure path as the first one.
 */

/** The part of a handler's context that records steps. */
type StepRecorder = Pick<ObjectSharedContext, 'run'>;

/** What one recorded call left: its result, or the error it threw as plain data. */
type Outcome<T> = { ok: true; value: T } | { ok: false; error: RecordedError };

interface RecordedError {
  name: string;
  message: string;
  /** The family's code, when the error was one of the library's. */
  code?: string;
  info?: ProviderErrorInfo;
}

async function outcomeOf<T>(call: () => Promise<T>): Promise<Outcome<T>> {
  try {
    // Through JSON now, so the first run sees exactly what a retry will read back.
    return { ok: true, value: JSON.parse(JSON.stringify(await call())) as T };
  } catch (e) {
    const [name, message] = e instanceof Error ? [e.name, e.message] : ['Error', String(e)];
    const code = CompactorError.isInstance(e) ? e.code : undefined;
    const info = ProviderError.isInstance(e) ? e.info : undefined;
    return {
      ok: false,
      error: { name, message, ...(code !== undefined ? { code } : {}), ...(info ? { info } : {}) },
    };
  }
}

/**
 * The error a recorded failure stands for, of the class the compaction machines tell apart;
 * any other failure comes back under its own name and code.
 */
function errorOf(recorded: RecordedError): CompactorError {
  const { name, message, code, info } = recorded;
  if (!info) return Object.assign(new CompactorError(code ?? 'recorded-failure', message), { name });
  if (name === 'ContextCapacityError') return new ContextCapacityError(message, info);
  if (name === 'EmptySummaryError') return new EmptySummaryError(info);
  return Object.assign(new ProviderError(message, info, undefined, code), { name });
}

async function recorded<T>(ctx: StepRecorder, step: string, call: () => Promise<T>): Promise<T> {
  const outcome = await ctx.run(step, () => outcomeOf(call));
  if (outcome.ok) return outcome.value;
  throw errorOf(outcome.error);
}

/** The route with its summary and native compaction clients recorded as steps of `ctx`. */
export function journaledClients(ctx: StepRecorder, route: SessionRoute): SessionRoute {
  const { summary, standalone, inline } = route;
  return {
    ...route,
    summary: {
      provider: summary.provider,
      model: summary.model,
      summarize: (request, signal) => recorded(ctx, 'summary', () => summary.summarize(request, signal)),
    },
    standalone: standalone && {
      provider: standalone.provider,
      model: standalone.model,
      compactStandalone: (request, signal) =>
        recorded(ctx, 'native compaction', () => standalone.compactStandalone(request, signal)),
    },
    inline: inline && {
      provider: inline.provider,
      model: inline.model,
      compactInline: (request, signal) =>
        recorded(ctx, 'inline compaction', () => inline.compactInline(request, signal)),
    },
  };
}
