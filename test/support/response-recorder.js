/**
 * Records every HTTP response a Node process serves, as one JSON line per response in
 * `$RESPONSE_RECORD_DIR/<pid>.jsonl`: method, URL, status, headers and body, captured on the
 * server side just before the bytes go out, whatever client asked (supertest, fetch,
 * node:http, autocannon, a browser).
 *
 * The e2e global setup puts response-recorder-preload.js in NODE_OPTIONS (`--require`), so
 * every API process a suite spawns records too; test/support/contract-setup.ts installs it in the Jest process
 * itself for the in-process apps, and validates the records against openapi.json after each
 * test (test/support/openapi-contract.ts).
 *
 * Plain CommonJS with no dependency, so that it can be preloaded into any Node process.
 */
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const INSTALLED = Symbol.for('stats-api.response-recorder');

function install(dir = process.env.RESPONSE_RECORD_DIR) {
  if (!dir) return false;
  const proto = http.ServerResponse.prototype;
  const original = proto[INSTALLED] ?? { write: proto.write, end: proto.end, writeHead: proto.writeHead };
  const file = path.join(dir, `${process.pid}.jsonl`);
  const chunks = new WeakMap();
  const headArgs = new WeakMap();
  const recorded = new WeakSet();

  const collect = (res, chunk, encoding) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const list = chunks.get(res) ?? [];
    list.push(
      Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8'),
    );
    chunks.set(res, list);
  };

  proto.writeHead = function writeHead(status, ...rest) {
    // writeHead(status, [reason], [headers]): headers passed here never reach getHeaders().
    const headers = rest.find((arg) => arg !== null && typeof arg === 'object');
    if (headers) headArgs.set(this, headers);
    return original.writeHead.call(this, status, ...rest);
  };
  proto.write = function write(chunk, encoding, ...rest) {
    collect(this, chunk, encoding);
    return original.write.call(this, chunk, encoding, ...rest);
  };
  proto.end = function end(chunk, encoding, ...rest) {
    if (!recorded.has(this)) {
      recorded.add(this);
      collect(this, chunk, encoding);
      try {
        record(this);
      } catch {
        // Recording must never break the server under test.
      }
    }
    return original.end.call(this, chunk, encoding, ...rest);
  };
  proto[INSTALLED] = original;

  function record(res) {
    const req = res.req;
    if (!req) return;
    const headers = {};
    for (const [name, value] of Object.entries(res.getHeaders())) headers[name.toLowerCase()] = value;
    const extra = headArgs.get(res);
    if (Array.isArray(extra)) {
      for (let i = 0; i + 1 < extra.length; i += 2) headers[String(extra[i]).toLowerCase()] = extra[i + 1];
    } else if (extra) {
      for (const [name, value] of Object.entries(extra)) headers[name.toLowerCase()] = value;
    }
    const body = Buffer.concat(chunks.get(res) ?? []);
    const line = {
      pid: process.pid,
      method: req.method,
      url: req.originalUrl ?? req.url,
      status: res.statusCode,
      headers,
      // A response to HEAD has no body on the wire, whatever the handler passed to end().
      body: req.method === 'HEAD' ? '' : body.toString('utf8'),
    };
    fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
  }
  return true;
}

/** Restores the original ServerResponse methods. */
function uninstall() {
  const proto = http.ServerResponse.prototype;
  const original = proto[INSTALLED];
  if (!original) return;
  Object.assign(proto, original);
  delete proto[INSTALLED];
}

module.exports = { install, uninstall };
