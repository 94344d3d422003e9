/**
 * Preloaded (`node --require`) by test/embedded.e2e-spec.ts: better-sqlite3 cannot be found,
 * as on a machine where npm could not build the optional package.
 */
const Module = require('node:module');

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'better-sqlite3' || request.startsWith('better-sqlite3/')) {
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
