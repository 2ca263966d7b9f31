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
 * tokens and `Authorization` / `x-api-key` header values. Text that merely looks like a key
 * (`sk-…` in a tool output) is left alone: it is conversation content, not a secret of ours.
 */
export function redactSecrets(text: string, env: NodeJS.ProcessEnv = process.env): string {
  const known = Object.entries(env)
    .filter(([k, v]) => v !== undefined && v.length >= 8 && SECRET_NAME.test(k))
    .map(([, v]) => v);
  return redactKnown(text, known)
    .replace(/(Bearer\s+)[A-Za-z0-9._\-~+/=]{8,}/gi, '$1[REDACTED]')
    .replace(/("?(?:x-api-key|api[_-]?key|authorization)"?\s*[:=]\s*"?)[^"\s,}]{8,}/gi, '$1[REDACTED]');
}
