/**
 * `npm run -s versions -- write | check | gate`: the API versions' documents (src/versions/).
 * `write` makes openapi/versions/VERSION.yaml for every supported version but the newest, and the
 * changelog docs/api-versions.md; `check` fails naming each made file that is stale or missing; `gate` fails on every difference
 * between a released version's made document and its released one that the allow-list does not
 * name, and on every allow-list entry that names none. Exit 1 on a failure, 2 on bad arguments.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { projectRoot } from '../paths';
import type { JsonObject } from '../versions/change';
import { allowListFile, parseAllowList } from '../versions/allowed-differences';
import { changelogFile, changelogText } from '../versions/changelog';
import { formatDifference } from '../versions/document-diff';
import { staleMadeDocuments, writeMadeDocuments } from '../versions/documents';
import { runGate } from '../versions/gate';
import { versions, type SupportedVersion } from '../versions/versions';

const usage = 'usage: versions write | check | gate';

/** Where the command reads and writes, and what it says: the real project unless a test says otherwise. */
export interface Context {
  root: string;
  registry: readonly SupportedVersion[];
  log: (line: string) => void;
  error: (line: string) => void;
}

const defaults: Context = {
  root: projectRoot,
  registry: versions,
  log: (line) => console.log(line),
  error: (line) => console.error(line),
};

/** Whether the changelog differs from what the registry makes of it. */
function changelogStale(root: string, registry: readonly SupportedVersion[]): boolean {
  const file = path.join(root, changelogFile);
  return !fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== changelogText(registry);
}

function check({ root, registry, log, error }: Context, newest: JsonObject): number {
  const stale = staleMadeDocuments(newest, registry, root);
  if (changelogStale(root, registry)) stale.push({ file: changelogFile, problem: 'stale' });
  for (const { file, problem } of stale) error(`${file}: ${problem}`);
  if (stale.length > 0) {
    error('Run `npm run -s versions -- write` and commit what it writes.');
    return 1;
  }
  log(
    `The documents made for ${registry.length - 1} older version(s) and ${changelogFile} are up to date.`,
  );
  return 0;
}

function write({ root, registry, log }: Context, newest: JsonObject): number {
  const touched = writeMadeDocuments(newest, registry, root);
  if (changelogStale(root, registry)) {
    fs.mkdirSync(path.join(root, path.dirname(changelogFile)), { recursive: true });
    fs.writeFileSync(path.join(root, changelogFile), changelogText(registry));
    touched.push(changelogFile);
  }
  for (const file of touched) log(`wrote ${file}`);
  if (touched.length === 0) log('The made documents were up to date.');
  return 0;
}

function gate({ root, registry, log, error }: Context, newest: JsonObject): number {
  const read = (file: string) => YAML.parse(fs.readFileSync(path.join(root, file), 'utf8'));
  let allowList;
  try {
    allowList = parseAllowList(fs.readFileSync(path.join(root, allowListFile), 'utf8'));
  } catch (problem) {
    error((problem as Error).message);
    return 1;
  }
  const result = runGate(newest, allowList, read, registry);
  for (const { version, difference } of result.unexplained)
    error(`${version}: ${formatDifference(difference)}`);
  for (const { version, kind, pointer } of result.staleEntries)
    error(
      `${allowListFile}: stale allow-list entry: ${version} ${kind} ${pointer} matches no difference`,
    );
  if (result.unexplained.length > 0 || result.staleEntries.length > 0) {
    if (result.unexplained.length > 0)
      error(
        'A released version must not see these: undo each in a change module (src/versions/changes/), or, if it is meant and no client can see it as a change, list it with its reason in the allow-list.',
      );
    return 1;
  }
  for (const { version, released } of result.compared)
    log(
      `${version}: its made document equals ${released}, prose aside and ${allowList.filter((entry) => entry.version === version).length} allowed difference(s).`,
    );
  return 0;
}

const commands = { check, write, gate };

export function run(args: string[], context: Partial<Context> = {}): number {
  const use = { ...defaults, ...context };
  const command = args[0] as keyof typeof commands;
  if (args.length !== 1 || !Object.hasOwn(commands, command)) {
    use.error(usage);
    return 2;
  }
  const newest = YAML.parse(
    fs.readFileSync(path.join(use.root, 'openapi', 'openapi.yaml'), 'utf8'),
  ) as JsonObject;
  return commands[command](use, newest);
}

if (require.main === module) process.exitCode = run(process.argv.slice(2));
