import type { ActorFailureKind } from '../../machines/index.js';
import { oneLine } from './text.js';

/**
 * Every error the library throws, in one family. Each carries a stable string `code` that
 * callers and the CLI branch on (messages may be reworded; codes do not change), and the
 * original error as `cause` when it wraps one.
 *
 * `instanceof` fails when two copies of the package are loaded (a bundled adapter beside the
 * app's own copy), so each class also marks its instances with a registry symbol, and
 * `SomeError.isInstance(x)` checks that mark instead: it recognises errors of any copy.
 */

const FAMILY = 'context-compactor.error';

/** The registry symbol that marks instances of the class named `name` (the base: `FAMILY`). */
const markOf = (name?: string): symbol => Symbol.for(name === undefined ? FAMILY : `${FAMILY}.${name}`);

const FAMILY_MARK = markOf();

/** True when `x` carries the mark `marker` (set by a class of any copy of this package). */
function hasMark(x: unknown, marker: symbol): boolean {
  return typeof x === 'object' && x !== null && (x as Record<symbol, unknown>)[marker] === true;
}

/** The base of every error the library throws. */
export class CompactorError extends Error {
  /** The mark of this class; each subclass declares its own. */
  static readonly marker: symbol = FAMILY_MARK;
  /** Stable machine-readable kind, e.g. `invalid-input`, `provider`, `window-too-small`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    // The name comes from the class's mark, not from the class itself, so it survives minifiers.
    const { marker } = new.target as unknown as { marker: symbol };
    this.name = marker === FAMILY_MARK ? 'CompactorError' : marker.description!.slice(FAMILY.length + 1);
    this.code = code;
    // Mark the instance with the mark of its class and of every class above it.
    for (let c: unknown = new.target; c !== Error && c; c = Object.getPrototypeOf(c)) {
      if (Object.prototype.hasOwnProperty.call(c, 'marker'))
        Object.defineProperty(this, (c as { marker: symbol }).marker, { value: true });
    }
  }

  /** True when `x` is an error of this class (or a subclass), from this or another package copy. */
  static isInstance<T extends abstract new (...args: never[]) => CompactorError>(
    this: T & { marker: symbol },
    x: unknown,
  ): x is InstanceType<T> {
    return hasMark(x, this.marker);
  }
}

/**
 * An error the user caused (bad file, bad flag, bad config, a damaged store). Its message is
 * one line that names where and what; front ends print it as it is, without a stack.
 */
export class UserError extends CompactorError {
  static override readonly marker = markOf('UserError');
  constructor(message: string, code = 'invalid-input', options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/**
 * A library option is invalid (a bad value passed to `createCompactorSession`, `projectRequest`,
 * `recordUsage`, an adapter …). The message is one line: the option's path, then the problem.
 */
export class CompactorOptionsError extends UserError {
  static override readonly marker = markOf('CompactorOptionsError');
  /** Dotted path of the offending option, starting with the call that received it. */
  readonly path: string;
  constructor(path: string, problem: string, code = 'invalid-options') {
    super(oneLine(`${path}: ${problem}`), code);
    this.path = path;
  }
}

/**
 * The directory holds a different session, or other files and no session: continuing would
 * fork or bury someone's records. `dir` and `problem` let a front end name its own flags.
 */
export class StoredSessionConflictError extends CompactorOptionsError {
  static override readonly marker = markOf('StoredSessionConflictError');
  declare readonly code: 'session-conflict';
  readonly dir: string;
  readonly problem: string;
  constructor(dir: string, problem: string, hint: string) {
    super('createCompactorSession: options.sessionDir', `${dir} ${problem}; ${hint}`, 'session-conflict');
    this.dir = dir;
    this.problem = problem;
  }
}

const n = (x: number): string => x.toLocaleString('en-US');

/**
 * The part of every request that no projection can shrink — the system prompt and tool
 * schemas, the task (the first user message) and the room kept for the answer — is larger
 * than the window. It is a configuration problem, so it is raised before any request is sent.
 */
export class WindowTooSmallError extends UserError {
  static override readonly marker = markOf('WindowTooSmallError');
  declare readonly code: 'window-too-small';
  readonly fixedTokens: number;
  readonly capacityTokens: number;
  constructor(parts: { prefix: number; task: number; reserved: number }, capacity: number) {
    const fixed = parts.prefix + parts.task + parts.reserved;
    super(
      `the context window of ${n(capacity)} tokens cannot hold even the fixed part of a request ` +
        `(${n(fixed)} tokens: system prompt and tool schemas ${n(parts.prefix)}, the task ${n(parts.task)}, ` +
        `reserved for the answer ${n(parts.reserved)}); raise the capacity, lower the reserved output ` +
        'or shorten the system prompt, tools or task',
      'window-too-small',
    );
    this.fixedTokens = fixed;
    this.capacityTokens = capacity;
  }
}

/**
 * The proxy (`compactor serve`) will not use a request: `status` is the HTTP status it answers
 * with (400 a request it cannot read or fit, 413 a body over its size limit).
 */
export class RequestRefusedError extends CompactorError {
  static override readonly marker = markOf('RequestRefusedError');
  declare readonly code: 'request-refused';
  readonly status: number;
  constructor(status: number, message: string) {
    super('request-refused', message);
    this.status = status;
  }
}

/** A session was asked to do something while its turn or compaction was still running. */
export class SessionBusyError extends CompactorError {
  static override readonly marker = markOf('SessionBusyError');
  declare readonly code: 'session-busy';
  constructor(message: string) {
    super('session-busy', message);
  }
}

/**
 * Provider errors. Messages are bounded and secret-free: provider, model, status, code and a
 * short cause; never the whole JSON body.
 */
export interface ProviderErrorInfo {
  provider: string;
  model: string;
  status?: number;
  code?: string;
  /** Input tokens of the failing attempt, when the provider or the caller knows them. */
  inputTokens?: number;
  /** Budget used for the failing attempt, when bounded. */
  budget?: number;
  retryable?: boolean;
}

/** A provider call failed; `info` says which provider, model, status and whether a retry may help. */
export class ProviderError extends CompactorError {
  static override readonly marker = markOf('ProviderError');
  readonly info: ProviderErrorInfo;
  constructor(message: string, info: ProviderErrorInfo, options?: { cause?: unknown }, code = 'provider') {
    super(code, message, options);
    this.info = info;
  }
}

/** A provider failure worth another attempt, with the delay the server asked for; used only between attempts. */
export class RetryableProviderError extends ProviderError {
  static override readonly marker = markOf('RetryableProviderError');
  retryAfterMs?: number;
}

/** The provider rejected the request because the input exceeds the model context. */
export class ContextCapacityError extends ProviderError {
  static override readonly marker = markOf('ContextCapacityError');
  declare readonly code: 'context-capacity';
  constructor(message: string, info: ProviderErrorInfo, options?: { cause?: unknown }) {
    super(message, { ...info, retryable: false }, options, 'context-capacity');
  }
}

/** The provider returned an empty summary. */
export class EmptySummaryError extends ProviderError {
  static override readonly marker = markOf('EmptySummaryError');
  declare readonly code: 'empty-summary';
  constructor(info: ProviderErrorInfo) {
    super('provider returned an empty summary', info, undefined, 'empty-summary');
  }
}

/** A budget made the request impossible before any provider call. */
export class BudgetError extends CompactorError {
  static override readonly marker = markOf('BudgetError');
  readonly allowance: string;
  readonly needed: number;
  readonly available: number;
  constructor(allowance: string, needed: number, available: number, message?: string, code = 'budget') {
    super(
      code,
      message ??
        `summary budget exhausted: ${allowance} needs ${needed} tokens but only ${available} are available`,
    );
    this.allowance = allowance;
    this.needed = needed;
    this.available = available;
  }
}

/**
 * A failure before any provider call whose cause is not an exhausted allowance: the history
 * holds no protocol-complete group (empty, or only orphan results), so there is no fork to
 * send. Still a {@link BudgetError} so callers treat it as one, but its message says what happened.
 */
export class NothingToSummarizeError extends BudgetError {
  static override readonly marker = markOf('NothingToSummarizeError');
  declare readonly code: 'nothing-to-summarize';
  constructor(allowance: string, historyLength: number, available: number) {
    super(
      allowance,
      0,
      available,
      `nothing to summarize: none of the history's ${historyLength} message(s) forms a complete protocol group for the ${allowance}`,
      'nothing-to-summarize',
    );
  }
}

/**
 * A route could not be resolved (unknown provider, missing base URL or API key, bad
 * catalog file). The message is one line naming the field or file; it never holds a key.
 */
export class RouteError extends CompactorError {
  static override readonly marker = markOf('RouteError');
  declare readonly code: 'route';
  constructor(message: string) {
    super('route', message);
  }
}

/**
 * The error runtime actors throw so the machines can classify it: `kind` says capacity /
 * budget / provider / empty-summary; the message is bounded and secret-free.
 */
export class ActorFailureError extends CompactorError {
  static override readonly marker = markOf('ActorFailureError');
  declare readonly code: 'actor-failure';
  readonly kind: ActorFailureKind;
  readonly inputTokens?: number;
  constructor(
    kind: ActorFailureKind,
    message: string,
    options: { inputTokens?: number; cause?: unknown } = {},
  ) {
    super('actor-failure', message, { cause: options.cause });
    this.kind = kind;
    if (options.inputTokens !== undefined) this.inputTokens = options.inputTokens;
  }
}

/** An optional peer package an entry point needs is not installed. */
export class PeerDependencyError extends CompactorError {
  static override readonly marker = markOf('PeerDependencyError');
  declare readonly code: 'missing-peer';
  constructor(message: string, options?: { cause?: unknown }) {
    super('missing-peer', message, options);
  }
}

/** A path or answer given to the machine test helpers breaks the machine's rules. */
export class ModelPathError extends CompactorError {
  static override readonly marker = markOf('ModelPathError');
  declare readonly code: 'model-path';
  constructor(message: string, options?: { cause?: unknown }) {
    super('model-path', message, options);
  }
}

/** A run or a provider call was cancelled by its caller's abort signal (which carried no reason of its own). */
export class CancelledError extends CompactorError {
  static override readonly marker = markOf('CancelledError');
  declare readonly code: 'cancelled';
  constructor(message: string) {
    super('cancelled', message);
  }
}

/** A broken promise inside the library (a missing stored entry, a damaged built-in prompt). */
export class InternalError extends CompactorError {
  static override readonly marker = markOf('InternalError');
  declare readonly code: 'internal';
  constructor(message: string, options?: { cause?: unknown }) {
    super('internal', message, options);
  }
}

export type InterruptSignal = 'SIGINT' | 'SIGTERM';

/** A run stopped by Ctrl-C or SIGTERM; it is the reason its abort signal carries. */
export class Interrupted extends CompactorError {
  static override readonly marker = markOf('Interrupted');
  declare readonly code: 'interrupted';
  readonly signalName: InterruptSignal;
  constructor(signalName: InterruptSignal) {
    super('interrupted', `interrupted by ${signalName}`);
    this.signalName = signalName;
  }
}
