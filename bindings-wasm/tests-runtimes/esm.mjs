// Node ESM, Bun, Deno, and the esbuild bundle for Node: `import` of the installed package.
import * as rk from 'royaltykit';
import * as fetchApi from 'royaltykit/fetch';
import { run, line } from './suite.mjs';

const runtime = globalThis.Bun ? 'bun' : globalThis.Deno ? 'deno' : `node-esm${process.env.ROYALTYKIT_BUNDLE ? '-bundle' : ''}`;
console.log(line(runtime, await run(rk, fetchApi)));
