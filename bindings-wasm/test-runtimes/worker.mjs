// A Cloudflare Worker (run by workerd on 127.0.0.1): the suite, plus the delivery POSTed to it
// verified with royaltykit/fetch.
import * as rk from 'royaltykit';
import * as fetchApi from 'royaltykit/fetch';
import { run, line } from './suite.mjs';

export default {
  async fetch(request) {
    const r = await run(rk, fetchApi);
    let posted;
    try {
      const { webhook } = await fetchApi.verifyRequest(request, 'whsec_runtime_suite', { now: 1795320000 });
      posted = `accepted ${webhook.deliveryId}`;
    } catch (e) {
      posted = `${e.code}/${e.httpStatus}`;
    }
    return new Response(`${line('workerd', r)}\nposted: ${posted}\n`);
  },
};
