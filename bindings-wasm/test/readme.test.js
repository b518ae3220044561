'use strict';
// The README's Node example, extracted and run against the installed package.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const ROOT = process.env.ROYALTYKIT_ROOT || path.join(__dirname, '..', '..');

test('README Node example runs and processes the delivery', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const m = readme.match(/<!-- example:node -->\s*```js\n([\s\S]*?)```/);
  assert.ok(m, 'README has a Node example');
  const file = path.join(process.cwd(), 'readme-example.js');
  fs.writeFileSync(file, m[1]);
  assert.equal(execFileSync(process.execPath, [file], { encoding: 'utf8' }), 'process ddex.delivery.acknowledged\n');
});
