/**
 * The kit's README lists every method, one line each, made from the code by
 * scripts/generate-client-readme.js (`--check` in `npm run -s check:generated`): a copy with a
 * line gone is reported stale, and written back it is the README as it is; the list names every
 * method a client made at run time has, in each version (those only the newest has marked with
 * it), and every value the entry points export.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as kit from '@task-tracker/client';
import * as webhooks from '@task-tracker/client/webhooks';
import { projectRoot } from '../../src/paths';

const script = path.join(projectRoot, 'scripts', 'generate-client-readme.js');
const readme = path.join(projectRoot, 'clients', 'typescript', 'README.md');
const text = fs.readFileSync(readme, 'utf8');
const section = text.slice(text.indexOf('<!-- methods:'), text.indexOf('<!-- end of methods -->'));
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-readme-methods-'));
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

/** The script's exit code and what it wrote to standard error. */
async function generate(...args: string[]): Promise<[number, string]> {
  try {
    await promisify(execFile)(process.execPath, [script, ...args], { cwd: projectRoot });
    return [0, ''];
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return [failed.code, failed.stderr.trim()];
  }
}

it('finds a copy with a line gone stale, and writes it back as the README is (so the README is current)', async () => {
  const stale = text.replace(/^- `tt\.tasks\.update\(.*\n/m, '');
  expect(stale).not.toBe(text);
  const [checked, written] = [path.join(folder, 'checked.md'), path.join(folder, 'written.md')];
  fs.writeFileSync(checked, stale);
  fs.writeFileSync(written, stale);
  const [check, write] = await Promise.all([
    generate('--check', '--readme', checked),
    generate('--readme', written),
  ]);
  expect(check).toEqual([
    1,
    expect.stringMatching(/list of methods is not what the code makes: run npm run -s generate/),
  ]);
  expect(write).toEqual([0, '']);
  expect(fs.readFileSync(written, 'utf8')).toBe(text);
}, 60_000);

it("lists every method of a client as it runs, and every function of the kit's entry points", () => {
  const made = { baseUrl: 'http://127.0.0.1:9', apiKey: 'tt_x' };
  const tt = kit.createClient(made);
  const newest = kit.createClient({ ...made, apiVersion: kit.apiVersions[0] });
  const listed = (call: string) =>
    section.includes(`- \`${call}(`) || section.includes(`\`${call}\``);
  const missing: string[] = [];
  for (const [name, value] of Object.entries(newest)) {
    if (typeof value === 'function') {
      if (!listed(`tt.${name}`)) missing.push(`tt.${name}`);
      continue;
    }
    for (const method of Object.keys(value as object)) {
      const inDefault = Object.hasOwn((tt as unknown as Record<string, object>)[name], method);
      const since = inDefault ? '' : ` (since ${kit.apiVersions[0]})`;
      const line = new RegExp(
        `^- \`tt\\.${name}\\.${method}\\([^)]*\\)\`${since.replace(/[()]/g, '\\$&')}:`,
        'm',
      );
      if (!line.test(section)) missing.push(`tt.${name}.${method}${since}`);
    }
  }
  // The default version's client has no method the newest's lacks.
  for (const [name, value] of Object.entries(tt))
    if (typeof value !== 'function')
      for (const method of Object.keys(value as object))
        if (!Object.hasOwn((newest as unknown as Record<string, object>)[name], method))
          missing.push(`tt.${name}.${method} (only in the default version)`);
  for (const [name, value] of [...Object.entries(kit), ...Object.entries(webhooks)])
    if (!listed(name)) missing.push(`${name} (${typeof value})`);
  expect(missing).toEqual([]);
});
