// Node ESM, Bun and Deno: the clients from the installed package against the fake API at the URL
// given as the first argument, an export also streamed to a file path (node:fs in each runtime).
import * as client from 'royaltykit/client';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runClient } from './client-suite.mjs';

const runtime = globalThis.Bun ? 'bun' : globalThis.Deno ? 'deno' : 'node-esm';
const base = globalThis.Deno ? globalThis.Deno.args[0] : process.argv[2];
const dir = mkdtempSync(join(tmpdir(), 'rk-client-'));
const file = { path: join(dir, 'out.csv'), read: async (p) => new Uint8Array(readFileSync(p)) };
console.log(await runClient(runtime, client, base, file));
