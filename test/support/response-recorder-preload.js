/** Preloaded (`node --require`) into the processes the e2e suites spawn: see response-recorder.js. */
'use strict';
require('./response-recorder').install();
