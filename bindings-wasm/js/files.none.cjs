'use strict';
// No file system (Workers, browsers): royaltykit/client writes exports to a WritableStream only.
module.exports = null;
