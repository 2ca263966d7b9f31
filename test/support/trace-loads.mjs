// `node --import ./trace-loads.mjs …`: prints every module URL the child loads (one
// `LOAD url` line each, to stderr). Used to check what the CLI imports at start-up.
import { register } from 'node:module';

const hooks = `export async function load(url, context, next) {
  if (!url.startsWith('node:')) process.stderr.write('LOAD ' + url + '\\n');
  return next(url, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
