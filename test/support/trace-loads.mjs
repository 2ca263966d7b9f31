// `node --import ./trace-loads.mjs …`: prints every module URL the child loads (one
// `LOAD url` line each, to stderr). Used to check what the CLI imports at start-up.
// ES modules pass through the loader hook; CommonJS files loaded by require() (tiktoken,
// undici's internals) do not, so Module._load is wrapped to print those too.
import Module, { isBuiltin, register } from 'node:module';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const hooks = `export async function load(url, context, next) {
  if (!url.startsWith('node:')) process.stderr.write('LOAD ' + url + '\\n');
  return next(url, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);

const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (!isBuiltin(request))
    try {
      const file = Module._resolveFilename(request, parent, isMain);
      process.stderr.write(`LOAD ${pathToFileURL(file).href}\n`);
    } catch {
      /* the real load reports it */
    }
  return load.apply(this, arguments);
};
