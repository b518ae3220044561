'use strict';
// The demo receiver as a process of its own, for make soak: prints its port on stdout.
const { startReceiver } = require('./receiver.js');

startReceiver({ secrets: [process.env.SOAK_SECRET], capacity: Number(process.env.SOAK_CAPACITY) }).then(({ url }) => {
  process.stdout.write(`${url}\n`);
});
