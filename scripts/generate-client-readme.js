#!/usr/bin/env node
/**
 * The client kit's README lists every method with one line each, made from the kit's code so it
 * cannot drift: the TypeScript compiler reads what each entry point (`@task-tracker/client`,
 * `@task-tracker/client/webhooks`) exports, the methods of the client `createClient` returns (in
 * the newest version, those the default version's client lacks marked with the version) and of
 * what its calls answer, and takes each one's line from its doc comment (its first sentence).
 * A method of the kit's own without a doc comment is an error, named.
 *
 *   node scripts/generate-client-readme.js           rewrites the section between the markers
 *   node scripts/generate-client-readme.js --check   fails when that section is not what it makes
 *   (--readme PATH reads and writes another copy of the README, for the script's own test)
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const root = path.resolve(__dirname, '..');
const kit = path.join(root, 'clients', 'typescript');
const check = process.argv.includes('--check');
const readmeAt = process.argv.indexOf('--readme');
const readme =
  readmeAt > 0 ? path.resolve(process.argv[readmeAt + 1]) : path.join(kit, 'README.md');
const start =
  '<!-- methods: made by scripts/generate-client-readme.js from the code (npm run -s generate); not edited by hand -->';
const end = '<!-- end of methods -->';
/** What the client's calls answer, and the name a line calls such a value by. */
const answers = [
  ['KitPromise', 'any call'],
  ['Paginator', 'a list'],
];

const config = ts.getParsedCommandLineOfConfigFile(
  path.join(kit, 'tsconfig.json'),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
);
// A file of the program that is on no disk: a client in the newest version, and that version.
const probe = path.join(kit, 'src', 'readme-probe.generated.ts');
const probeText = `import type { NewestApiVersion, TaskTrackerClient } from './index';
export declare const newestClient: TaskTrackerClient<NewestApiVersion>;
export declare const newestVersion: NewestApiVersion;
`;
const host = ts.createCompilerHost(config.options);
const getSourceFile = host.getSourceFile;
host.getSourceFile = (fileName, ...rest) =>
  fileName === probe
    ? ts.createSourceFile(probe, probeText, ts.ScriptTarget.Latest)
    : getSourceFile.call(host, fileName, ...rest);
const fileExists = host.fileExists;
host.fileExists = (fileName) => fileName === probe || fileExists.call(host, fileName);
const program = ts.createProgram({
  rootNames: [...config.fileNames, probe],
  options: config.options,
  host,
});
const checker = program.getTypeChecker();
const fromKit = (declaration) => declaration.getSourceFile().fileName.startsWith(kit);
const undocumented = [];

/** The first sentence of a symbol's doc comment, on one line (a period inside `code` ends none). */
function summary(symbol, name) {
  const text = ts
    .displayPartsToString(symbol.getDocumentationComment(checker))
    .replace(/\s+/g, ' ');
  if (text === '') {
    undocumented.push(name);
    return '';
  }
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '`') quoted = !quoted;
    if (!quoted && text[i] === '.' && (i === text.length - 1 || text[i + 1] === ' '))
      return text.slice(0, i + 1);
  }
  return text;
}

/** `(body, options?)`: the parameters of a signature as a reader calls it. */
function parameters(signature) {
  const names = signature.parameters.map((parameter) => {
    const declaration = parameter.valueDeclaration;
    const rest = declaration && declaration.dotDotDotToken ? '...' : '';
    const optional = declaration && checker.isOptionalParameter(declaration) ? '?' : '';
    return `${rest}${parameter.name}${optional}`;
  });
  return `(${names.join(', ')})`;
}

const callSignature = (symbol) =>
  checker.getSignaturesOfType(checker.getTypeOfSymbol(symbol), ts.SignatureKind.Call)[0];
/** A README line: the call, where it is made (for what a call answers), and the summary. */
const line = (call, symbol, name, where = '') => `- \`${call}\`${where}: ${summary(symbol, name)}`;

/** The type of a value the probe file declares. */
function probed(name) {
  const module = checker.getSymbolAtLocation(program.getSourceFile(probe));
  const symbol = checker.getExportsOfModule(module).find((exported) => exported.name === name);
  return checker.getTypeOfSymbol(symbol);
}

/**
 * The client's methods, `tt.projects.create(body, options?)`, and openapi-fetch's on one line:
 * those of a client in the newest version, each one a client in the default version (what
 * `createClient` returns without `apiVersion`) lacks followed by `(since VERSION)`.
 */
function clientMethods(createClient) {
  const byDefault = checker.getReturnTypeOfSignature(callSignature(createClient));
  const since = ` (since ${JSON.parse(checker.typeToString(probed('newestVersion')))})`;
  const lines = [];
  const fetchMethods = [];
  for (const property of checker.getPropertiesOfType(probed('newestClient'))) {
    const declaration = property.declarations[0];
    if (!fromKit(declaration)) {
      fetchMethods.push(`\`tt.${property.name}\``);
      continue;
    }
    const inDefault = checker.getPropertyOfType(byDefault, property.name);
    for (const method of checker.getPropertiesOfType(checker.getTypeOfSymbol(property))) {
      const name = `tt.${property.name}.${method.name}`;
      const everywhere =
        inDefault &&
        checker.getPropertyOfType(checker.getTypeOfSymbol(inDefault), method.name) !== undefined;
      const call = `${name}${parameters(callSignature(method))}`;
      lines.push(line(call, method, name, everywhere ? '' : since));
    }
  }
  lines.push(
    `- ${fetchMethods.join(', ')}: openapi-fetch's calls, for every path of the client's version, typed by its document.`,
  );
  for (const [interfaceName, value] of answers) {
    const declared = kitInterface(interfaceName);
    for (const member of declared.members.filter(ts.isMethodSignature)) {
      const method = checker.getSymbolAtLocation(member.name);
      const name = `${interfaceName}.${method.name}`;
      const call = `.${method.name}${parameters(callSignature(method))}`;
      lines.push(line(call, method, name, ` on ${value}`));
    }
  }
  return lines;
}

function kitInterface(name) {
  for (const file of program.getSourceFiles().filter((f) => fromKit(f)))
    for (const statement of file.statements)
      if (ts.isInterfaceDeclaration(statement) && statement.name.text === name) return statement;
  throw new Error(`no interface ${name} in the kit`);
}

/** One entry point's lines: its functions (the client's methods after createClient), errors and values. */
function entryPoint(specifier, file) {
  const module = checker.getSymbolAtLocation(program.getSourceFile(path.join(kit, 'src', file)));
  const functions = [];
  const errors = [];
  const values = [];
  for (const exported of checker.getExportsOfModule(module)) {
    const symbol =
      exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    if (symbol.flags & ts.SymbolFlags.Function) {
      const name = exported.name;
      functions.push(line(`${name}${parameters(callSignature(symbol))}`, symbol, name));
      if (name === 'createClient') functions.push(...clientMethods(symbol));
    } else if (symbol.flags & ts.SymbolFlags.Class)
      errors.push(line(exported.name, symbol, exported.name));
    else if (symbol.flags & ts.SymbolFlags.Variable)
      values.push(line(exported.name, symbol, exported.name));
  }
  return [`**\`${specifier}\`**`, '', ...functions, ...errors, ...values];
}

const section = [
  start,
  ...entryPoint('@task-tracker/client', 'index.ts'),
  '',
  ...entryPoint('@task-tracker/client/webhooks', 'webhooks.ts'),
  end,
].join('\n');

if (undocumented.length > 0) {
  console.error(
    `These have no doc comment, whose first sentence is their line in the README: ${undocumented.join(', ')}.`,
  );
  process.exit(1);
}
const text = fs.readFileSync(readme, 'utf8');
const from = text.indexOf(start);
const to = text.indexOf(end);
if (from < 0 || to < from) {
  console.error(`${readme} has no section between "${start}" and "${end}".`);
  process.exit(1);
}
const made = text.slice(0, from) + section + text.slice(to + end.length);
if (check) {
  if (made === text) process.exit(0);
  console.error(
    `${path.relative(root, readme)}'s list of methods is not what the code makes: run npm run -s generate.`,
  );
  process.exit(1);
}
if (made !== text) fs.writeFileSync(readme, made);
