'use strict';
// What the installed package exports: no test hook (a leading underscore, a panic, an FFI
// floor), and every error carries the status a webhook receiver should answer.
const test = require('node:test');
const assert = require('node:assert/strict');
const rk = require('royaltykit');
const native = require(require('node:path').join(require('node:path').dirname(require.resolve('royaltykit')), 'native/royaltykit_wasm.cjs'));

test('no test-only name is exported by the package or its wasm module', () => {
  const names = [...Object.keys(rk), ...Object.keys(native)];
  assert.ok(names.length > 40);
  assert.deepEqual(names.filter((n) => /^_|panic|floor|memory/i.test(n)), []);
});

test('errors carry the status a receiver should answer', () => {
  const body = Buffer.from('{"event":"x"}');
  const signed = rk.signWebhook('whsec_a', body, { timestamp: 1000 });
  const cases = [
    [() => rk.verifyWebhook(signed, body, 'whsec_other', { now: 1000 }), 'no_matching_signature', 401],
    [() => rk.verifyWebhook(signed, body, 'whsec_a', { now: 1000, maxBodyBytes: 4 }), 'payload_too_large', 413],
    [() => rk.verifyWebhook({}, body, 'whsec_a', { now: 1000 }), 'missing_header', 400],
    [() => rk.verifyWebhook(signed, body, '', { now: 1000 }), 'invalid_secret', 500],
    [() => rk.verifyWebhook(signed, body, 'whsec_a', { now: 1000, toleranceSeconds: -1 }), 'invalid_argument', 500],
  ];
  for (const [run, code, status] of cases) {
    assert.throws(run, (e) => e instanceof rk.RoyaltyKitError && e.code === code && e.httpStatus === status, code);
  }
});

test('the wasm core needs SIMD: an engine without it gets an error saying so, not a bare CompileError', () => {
  const { execFileSync } = require('node:child_process');
  const dir = require('node:path').dirname(require.resolve('royaltykit'));
  const { simdMissing, PROBE } = require(require('node:path').join(dir, 'native/simd.cjs'));
  // The probe really uses SIMD: the same bytes with its SIMD instruction prefix broken do not validate.
  assert.equal(WebAssembly.validate(PROBE), true);
  const broken = Uint8Array.from(PROBE, (b) => (b === 0xfd ? 0xff : b));
  assert.equal(WebAssembly.validate(broken), false);
  assert.equal(simdMissing(WebAssembly), null);
  assert.match(simdMissing({ validate: () => false }), /needs WebAssembly with SIMD .*Safari >= 16\.4/);
  assert.match(simdMissing(undefined), /needs WebAssembly with SIMD/);
  // The package in a child process whose engine refuses SIMD modules.
  const script = `WebAssembly.validate = () => false; try { require(${JSON.stringify(dir)}); console.log('loaded'); } catch (e) { console.log(e.message); }`;
  const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.match(out, /^royaltykit needs WebAssembly with SIMD/);
});

test('Node loads the package\'s .wasm file, checked by the digest the build wrote; without the file, the embedded copy', () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const os = require('node:os');
  const dir = path.join(path.dirname(require.resolve('royaltykit')), 'native');
  const file = fs.readFileSync(path.join(dir, 'royaltykit_wasm_bg.wasm'));
  const digest = require('node:crypto').createHash('sha256').update(file).digest('hex');
  const loader = fs.readFileSync(path.join(dir, 'wasm.node.cjs'), 'utf8');
  assert.ok(loader.includes(`'${digest}'`), 'wasm.node.cjs must carry the SHA-256 of the .wasm it ships beside');
  assert.ok(file.equals(require(path.join(dir, 'wasm.node.cjs'))));
  // A bundle without the file, and one with a file of another build beside it: the embedded copy.
  for (const stray of [null, Buffer.from('\0asm\x01\0\0\0')]) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-wasm-'));
    fs.copyFileSync(path.join(dir, 'wasm.node.cjs'), path.join(tmp, 'wasm.node.cjs'));
    fs.copyFileSync(path.join(dir, 'wasm.cjs'), path.join(tmp, 'wasm.cjs'));
    if (stray) fs.writeFileSync(path.join(tmp, 'royaltykit_wasm_bg.wasm'), stray);
    assert.ok(file.equals(Buffer.from(require(path.join(tmp, 'wasm.node.cjs')))));
    fs.rmSync(tmp, { recursive: true });
  }
});
