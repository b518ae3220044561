'use strict';
// No node:diagnostics_channel (Workers, browsers): events go to `onEvent` only.
module.exports = null;
