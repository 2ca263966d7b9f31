/** Environment variable names whose values are secrets. */
const SECRET_NAME = /(API_KEY|_KEY$|TOKEN|SECRET|PASSWORD|AUTH)/i;

/** Replaces every occurrence of each known secret value (at least 4 characters) with `[REDACTED]`. */
export function redactKnown(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('[REDACTED]');
  return out;
}

/**
 * Removes secrets from what Compactor itself prints or logs about errors and configuration:
 * values of secret-named environment variables (the keys it was configured with), bearer
 * tokens, `Authorization` / `x-api-key` header values and key-shaped values after an API-key
 * label (`… API key provided: sk-…`). Other text that merely looks like a key (`sk-…` in a tool
 * output) is left alone: it is conversation content, not a secret of ours.
 */
export function redactSecrets(text: string, env: NodeJS.ProcessEnv = process.env): string {
  const known = Object.entries(env)
    .filter(([k, v]) => v !== undefined && v.length >= 8 && SECRET_NAME.test(k))
    .map(([, v]) => v);
  return redactKnown(text, known)
    .replace(/(Bearer\s+)[A-Za-z0-9._\-~+/=]{8,}/gi, '$1[REDACTED]')
    .replace(QUOTED_KEY_VALUE, '$1[REDACTED]')
    .replace(KEY_HEADER, '$1[REDACTED]')
    .replace(API_KEY_LABEL, (all: string, label: string, value: string) =>
      looksLikeKey(value) ? `${label}[REDACTED]` : all,
    );
}

/** A quoted value of a key field or header (`"x-api-key": "…"`, `api_key="…"`): all of it is the secret. */
const QUOTED_KEY_VALUE = /("?(?:x-api-key|api[_-]?key|authorization)"?\s*[:=]\s*")[^"\s]{8,}(?=")/gi;

/** An unquoted header value (`x-api-key: …`, `Authorization: …`): header values are secrets. */
const KEY_HEADER = /((?:x-api-key|authorization)\s*[:=]\s*)(?!Bearer\b)[^"\s,}]{8,}/gi;

/**
 * An unquoted value after an API-key label, which may have a few words before its colon
 * (`api_key: …`, `Incorrect API key provided: …`). Upstream errors put prose there too
 * (`invalid_api_key: Incorrect API key …`), so only a key-shaped value is replaced.
 */
const API_KEY_LABEL =
  /(\bapi[ _-]?key(?:\s+[A-Za-z]+){0,3}\s*[:=]\s*)([A-Za-z0-9][A-Za-z0-9._\-~+/=*]*[A-Za-z0-9_\-~+/=*])/gi;

/** Common prefixes of provider keys (OpenAI, xAI, Groq, GitHub, Hugging Face, Google). */
const KEY_PREFIX = /^(?:sk|pk|rk|xai|gsk|ghp|hf)[-_]|^AIza/;

/**
 * True for a token shaped like a key rather than a word: at least 8 characters with a digit or
 * a masking `*`, or a known key prefix. Plain words such as `Incorrect` or `missing` are not.
 */
function looksLikeKey(token: string): boolean {
  return token.length >= 8 && (/[0-9*]/.test(token) || KEY_PREFIX.test(token));
}
