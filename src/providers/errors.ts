/**
 * Provider errors. Messages are bounded and secret-free: provider, model, status,
 * code and a short cause; never the whole JSON body.
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
export class ProviderError extends Error {
  readonly info: ProviderErrorInfo;
  constructor(message: string, info: ProviderErrorInfo, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProviderError';
    this.info = info;
  }
}

/** The provider rejected the request because the input exceeds the model context. */
export class ContextCapacityError extends ProviderError {
  constructor(message: string, info: ProviderErrorInfo, options?: { cause?: unknown }) {
    super(message, { ...info, retryable: false }, options);
    this.name = 'ContextCapacityError';
  }
}

/** The provider returned an empty summary. */
export class EmptySummaryError extends ProviderError {
  constructor(info: ProviderErrorInfo) {
    super('provider returned an empty summary', info);
    this.name = 'EmptySummaryError';
  }
}

/** A budget made the request impossible before any provider call. */
export class BudgetError extends Error {
  readonly allowance: string;
  readonly needed: number;
  readonly available: number;
  constructor(allowance: string, needed: number, available: number) {
    super(
      `summary budget exhausted: ${allowance} needs ${needed} tokens but only ${available} are available`,
    );
    this.name = 'BudgetError';
    this.allowance = allowance;
    this.needed = needed;
    this.available = available;
  }
}

/**
 * A route could not be resolved (unknown provider, missing base URL or API key, bad
 * catalog file). The message is one line naming the field or file; it never holds a key.
 */
export class RouteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RouteError';
  }
}
