'use strict';
// royaltykit/client for require() and bundlers: the wasm instantiated from its embedded bytes,
// then the clients (client.lib.cjs). Cloudflare Workers take client.workerd.mjs instead.
require('./native/init.cjs');
module.exports = require('./client.lib.cjs');
