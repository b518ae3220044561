// Cold start for bench/RESULTS.md: import of the package (the wasm instantiated) plus the first
// verification, timed inside the runtime (process start excluded).
const t0 = performance.now();
import('royaltykit').then((rk) => {
  const body = new TextEncoder().encode('{"event":"ddex.delivery.acknowledged","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:00:00Z"}');
  const headers = rk.signWebhook('whsec_cold', body, { timestamp: 1795320000, deliveryId: 'dlv_cold' });
  rk.verifyWebhook(headers, body, 'whsec_cold', { now: 1795320000 });
  const line = `COLDSTART ${(performance.now() - t0).toFixed(2)}`;
  if (globalThis.document) document.getElementById('out').textContent = line;
  else console.log(line);
});
