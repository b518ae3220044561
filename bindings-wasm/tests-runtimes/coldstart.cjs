// Cold start of require() (see coldstart.mjs).
const t0 = performance.now();
const rk = require('royaltykit');
const body = new TextEncoder().encode('{"event":"ddex.delivery.acknowledged","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:00:00Z"}');
const headers = rk.signWebhook('whsec_cold', body, { timestamp: 1795320000, deliveryId: 'dlv_cold' });
rk.verifyWebhook(headers, body, 'whsec_cold', { now: 1795320000 });
console.log(`COLDSTART ${(performance.now() - t0).toFixed(2)}`);
