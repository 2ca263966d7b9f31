/** Environment variable names whose values are secrets. */
const SECRET_NAME = /(API_KEY|TOKEN|SECRET|PASSWORD|AUTH)/i;

/**
 * Removes secrets from text before it is printed or logged: values of secret-looking
 * environment variables, bearer tokens, and common API-key shapes (sk-…, xai-…).
 */
export function redactSecrets(text: string, env: NodeJS.ProcessEnv = process.env): string {
  let out = text;
  for (const [k, v] of Object.entries(env)) {
    if (v && v.length >= 8 && SECRET_NAME.test(k)) out = out.split(v).join('[REDACTED]');
  }
  return out
    .replace(/(Bearer\s+)[A-Za-z0-9._\-~+/=]{8,}/gi, '$1[REDACTED]')
    .replace(/\b(sk-(?:ant-|proj-)?|xai-|gsk_|AIza)[A-Za-z0-9_-]{8,}/g, '[REDACTED]')
    .replace(/("?(?:x-api-key|api[_-]?key|authorization)"?\s*[:=]\s*"?)[^"\s,}]{8,}/gi, '$1[REDACTED]');
}
