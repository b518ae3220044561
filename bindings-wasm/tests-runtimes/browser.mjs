// The esbuild bundle for the browser, run in headless Chromium: the result goes into the page.
import * as rk from 'royaltykit';
import * as fetchApi from 'royaltykit/fetch';
import { run, line } from './suite.mjs';

run(rk, fetchApi).then((r) => {
  document.getElementById('out').textContent = line('chromium', r);
});
