import { ContextCapacityError, ProviderError, type ProviderErrorInfo } from '../core/errors.js';
import { boundedCause } from './redact.js';

/**
 * Turns a provider error (HTTP error body, SSE error event, failed response) into a
 * bounded, secret-free {@link ProviderError}, recognising context-capacity rejections
 * across providers as {@link ContextCapacityError}.
 */

/** Who was called; carried into every error (provider / model). */
export interface CallSite {
  provider: string;
  model: string;
  /** Secrets to scrub from any text that reaches an error message. */
  secrets?: readonly (string | undefined)[];
}

/** The fields of an error envelope that matter, whatever the provider's shape. */
export interface ErrorFacts {
  status?: number;
  code?: string;
  type?: string;
  message?: string;
}

/** Overflow texts seen across providers (context-overflow messages of each API). */
const CAPACITY_PATTERNS: readonly RegExp[] = [
  /prompt is too long/i,
  /input is too long for requested model/i,
  /exceeds the context window/i,
  /input token count.*exceeds the maximum/i,
  /maximum prompt length is \d+/i,
  /reduce the length of the messages/i,
  /maximum context length is \d+ tokens/i,
  /exceeds the limit of \d+/i,
  /exceeds the available context size/i,
  /greater than the context length/i,
  /context window exceeds limit/i,
  /exceeded model token limit/i,
  /too large for model with \d+ maximum context length/i,
  /input length and `?max_tokens`? exceed context limit/i,
  /context[_ ]length[_ ]exceeded/i,
  /too many tokens/i,
  /token limit exceeded/i,
];

/** Input-token counts stated in overflow messages, most specific first. */
const INPUT_TOKEN_PATTERNS: readonly RegExp[] = [
  /prompt is too long: (\d+) tokens/i,
  /\((\d+) in the messages/i,
  /messages resulted in (\d+) tokens/i,
  /you requested (?:about )?(\d+) tokens/i,
  /request contains (\d+) tokens/i,
  /input token count \((\d+)\)/i,
  /exceed context limit: (\d+) \+/i,
];

function str(v: unknown): string | undefined {
  if (typeof v === 'string' && v.length > 0) return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Extracts code/type/message from any known envelope: OpenAI `{error:{…}}`, Anthropic
 * `{type:"error", error:{type, message}}`, vLLM flat `{object:"error", message, code}`,
 * Gemini arrays `[{error:{…}}]`, Responses stream events (flat or nested).
 */
export function errorFactsFromJson(json: unknown): ErrorFacts {
  let root = Array.isArray(json) ? json[0] : json;
  if (!isRecord(root)) return {};
  if (isRecord(root.response) && isRecord(root.response.error)) root = root.response.error;
  const inner = isRecord(root) && isRecord(root.error) ? root.error : root;
  if (!isRecord(inner)) return {};
  const details = isRecord(inner.details) ? inner.details : undefined;
  return {
    code: str(inner.code) ?? str(details?.error_code) ?? str(inner.status),
    type: str(inner.type) === 'error' ? undefined : str(inner.type),
    message: str(inner.message) ?? (typeof root.error === 'string' ? root.error : undefined),
  };
}

/** Parses an error body text; non-JSON bodies become the message (bounded later). */
export function errorFactsFromBody(status: number | undefined, bodyText: string): ErrorFacts {
  try {
    return { ...errorFactsFromJson(JSON.parse(bodyText)), status };
  } catch {
    return { message: bodyText.trim() || undefined, status };
  }
}

/** Classification order: HTTP status → error.code → error.type → message regex. */
export function isContextCapacity(f: ErrorFacts): boolean {
  if (f.status === 413) return true;
  if (f.code === 'context_length_exceeded') return true;
  if (f.type === 'request_too_large' || f.type === 'context_length_exceeded') return true;
  const m = f.message ?? '';
  return CAPACITY_PATTERNS.some((re) => re.test(m));
}

/** Input tokens stated by an overflow message, when it states them. */
export function inputTokensFromMessage(message: string | undefined): number | undefined {
  if (!message) return undefined;
  for (const re of INPUT_TOKEN_PATTERNS) {
    const m = re.exec(message);
    if (m) return Number(m[1]);
  }
  return undefined;
}

/** Longest provider error code kept (codes are short identifiers; anything longer is noise). */
const MAX_CODE_CHARS = 100;

/** Retryable statuses (OpenAI SDK policy, plus Anthropic 529). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Transient error types/codes worth another attempt (overloaded, 5xx-style, rate limits, timeouts). */
const TRANSIENT = /overloaded|server_error|rate_limit|api_error|timeout/i;

/**
 * Whether an error is worth another attempt, judged by its HTTP status and by its code, which
 * providers send as a string (`rate_limit_exceeded`) or a number (OpenRouter `{"code":429}`
 * inside a 200 stream, vLLM `"code": 503`): a numeric code is read like a status.
 */
export function isRetryableFacts(f: ErrorFacts): boolean {
  if (f.status !== undefined && isRetryableStatus(f.status)) return true;
  const code = f.code ?? '';
  if (/^\d{3}$/.test(code)) return isRetryableStatus(Number(code));
  return TRANSIENT.test(`${f.type ?? ''} ${code}`);
}

/** Builds the one error a caller sees, with a bounded cause and no body dump. */
export function providerErrorFrom(
  site: CallSite,
  facts: ErrorFacts,
  extra: Partial<ProviderErrorInfo> = {},
): ProviderError {
  // The code comes from the provider's body too: bounded and scrubbed like the cause.
  const rawCode = facts.code ?? facts.type;
  const code = rawCode ? boundedCause(rawCode, site.secrets, MAX_CODE_CHARS) : undefined;
  const info: ProviderErrorInfo = {
    provider: site.provider,
    model: site.model,
    ...(facts.status !== undefined ? { status: facts.status } : {}),
    ...(code ? { code } : {}),
    ...extra,
  };
  const head = [
    `${site.provider}/${site.model}`,
    facts.status !== undefined ? `HTTP ${facts.status}` : undefined,
    info.code,
  ]
    .filter(Boolean)
    .join(' ');
  const cause = boundedCause(facts.message ?? 'no error message', site.secrets);
  if (isContextCapacity(facts)) {
    const inputTokens = extra.inputTokens ?? inputTokensFromMessage(facts.message);
    return new ContextCapacityError(`${head}: context capacity exceeded: ${cause}`, {
      ...info,
      ...(inputTokens !== undefined ? { inputTokens } : {}),
    });
  }
  const retryable = extra.retryable ?? isRetryableFacts(facts);
  return new ProviderError(`${head}: ${cause}`, { ...info, retryable });
}
