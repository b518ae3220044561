// Node CommonJS: `require` of the installed package.
const rk = require('royaltykit');
const fetchApi = require('royaltykit/fetch');

import('./suite.mjs').then(async ({ run, line }) => console.log(line(`node-cjs${process.env.ROYALTYKIT_BUNDLE ? '-bundle' : ''}`, await run(rk, fetchApi))));
