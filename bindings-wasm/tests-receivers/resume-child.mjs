// A reporting export job for tests/receivers/test_cross_resume.py, as a Node worker runs one:
// `start` a new job, or `resume` the job whose checkpoint another language's process saved.
// Each checkpoint is written (atomically) to the checkpoint file before each of the job's
// requests goes out. Prints the export's id when the artifact is complete at the target path.
//   node resume-child.mjs start|resume BASE_URL CHECKPOINT_FILE TARGET_FILE
import fs from 'node:fs';
import { createReportsClient } from 'royaltykit/client';

const TENANT = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
const [mode, baseUrl, checkpoint, to] = process.argv.slice(2);
const save = (text) => {
  fs.writeFileSync(`${checkpoint}.tmp`, text);
  fs.renameSync(`${checkpoint}.tmp`, checkpoint);
};
const client = createReportsClient({ baseUrl, tenantId: TENANT, credentials: { clientId: 'cid', clientSecret: 'csecret' } });
const result = mode === 'start'
  ? await client.runExport({ export_class: 'statements', format: 'csv' }, { to, requestId: 'cross-language', onCheckpoint: save })
  : await client.runExport(null, { resume: fs.readFileSync(checkpoint, 'utf8'), to, onCheckpoint: save });
console.log(result.exportId);
