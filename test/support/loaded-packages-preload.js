/**
 * Preloaded (`node --require`) into a process whose start a suite checks: at exit, prints on
 * stderr one line `loaded packages: [...]` naming every package the process required by name.
 */
'use strict';
const Module = require('node:module');

const load = Module._load;
const seen = new Set();
Module._load = function (request, ...rest) {
  const name = /^(@[^/]+\/[^/]+|[^./][^/:]*)/.exec(request);
  if (name) seen.add(name[1]);
  return load.call(this, request, ...rest);
};
process.on('exit', () => process.stderr.write(`loaded packages: ${JSON.stringify([...seen].sort())}\n`));
