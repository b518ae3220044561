'use strict';
// node:diagnostics_channel where the runtime has it (Node, Bun, Deno): the channels the package
// publishes its events on, `royaltykit:client` (each machine event of a client's calls) and
// `royaltykit:receiver` (one event per delivery); nothing is published without a subscriber.
// process.getBuiltinModule first: it also works inside ESM bundles, where esbuild's require shim
// throws; null means `onEvent` only.
let channels = null;
try {
  const dc = globalThis.process?.getBuiltinModule?.('node:diagnostics_channel') ?? require('node:diagnostics_channel');
  channels = { client: dc.channel('royaltykit:client'), receiver: dc.channel('royaltykit:receiver') };
} catch {
  channels = null;
}
module.exports = channels;
