'use strict';
// royaltykit/client's file system where the runtime has one (Node, Bun, Deno): an export
// streamed to a path.
module.exports = { fs: require('node:fs/promises'), path: require('node:path') };
