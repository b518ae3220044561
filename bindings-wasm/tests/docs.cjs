'use strict';
// The documentation's examples: README.md and docs/*.md, each complete example marked
// `<!-- example:name -->` above its code block. The tests run them as written.
const fs = require('node:fs');
const path = require('node:path');

const ROOT = process.env.ROYALTYKIT_ROOT ?? path.resolve(__dirname, '../..');
const FILES = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const TEXT = FILES.map((f) => fs.readFileSync(path.join(ROOT, f), 'utf8')).join('\n');

/**
 * The code of the example `name` (a `js` block), or null when no page has it.
 * @param {string} name
 * @returns {string | null}
 */
function docExample(name) {
  const m = TEXT.match(new RegExp(`<!-- example:${name} -->\\s*\`\`\`js\\n([\\s\\S]*?)\`\`\``));
  return m ? m[1] : null;
}

module.exports = { docExample, DOC_FILES: FILES };
