/** Removes the recorded responses of the run (global-setup.js). */
const { rmSync } = require('node:fs');

module.exports = async () => {
  if (process.env.RESPONSE_RECORD_DIR)
    rmSync(process.env.RESPONSE_RECORD_DIR, { recursive: true, force: true });
};
