'use strict';
// The README's Node examples, extracted and run against the installed package.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const ROOT = process.env.ROYALTYKIT_ROOT || path.join(__dirname, '..', '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const RETRY_LOG = '503: retry in 2 s (server_error_retry)\n429: retry in 3 s (rate_limited_retry_after)\ndone after 3 attempts\n';
const EXPECTED = { node: 'process ddex.delivery.acknowledged\n', 'node-retry': RETRY_LOG };

for (const [name, output] of Object.entries(EXPECTED)) {
  test(`README example ${name} runs and prints the documented outcome`, () => {
    const m = README.match(new RegExp(`<!-- example:${name} -->\\s*\`\`\`js\\n([\\s\\S]*?)\`\`\``));
    assert.ok(m, `README has example ${name}`);
    const file = path.join(process.cwd(), `readme-${name}.js`);
    fs.writeFileSync(file, m[1]);
    assert.equal(execFileSync(process.execPath, [file], { encoding: 'utf8' }), output);
  });
}
