/**
 * The service starts from the build's parse of each YAML document it serves (the contract and the
 * older versions' made documents): the same objects the YAML parser gives, and only for the very
 * text the build parsed; a document changed since falls back to parsing its YAML.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { parsedDocument, yamlHash } from '../../src/http/document';
import { madeVersionSet } from '../../src/http/older-versions';
import { documentFileOf } from '../../src/versions/documents';
import { openapiDocumentPath, parsedDocumentPathOf, projectRoot } from '../../src/paths';
import { versions } from '../../src/versions/versions';

it("starts from the build's parse of the contract and of every older version's document", () => {
  const files = [
    openapiDocumentPath,
    ...versions.slice(1).map(({ version }) => documentFileOf(version)),
  ];
  for (const file of files) {
    // jest's global setup built dist/ (test/support/build-dist.js), the parses with it.
    expect(fs.existsSync(parsedDocumentPathOf(file))).toBe(true);
    expect(parsedDocument(file)).toEqual(parse(fs.readFileSync(file, 'utf8')));
  }
  const { documents } = madeVersionSet();
  for (const { version } of versions.slice(1))
    expect(documents.get(version)).toEqual(parse(fs.readFileSync(documentFileOf(version), 'utf8')));
});

it('uses a parse only for the text it was made from', () => {
  const folder = fs.mkdtempSync(path.join(projectRoot, 'dist', 'parsed-documents-test-'));
  try {
    const file = path.join(folder, 'document.yaml');
    fs.writeFileSync(file, 'openapi: 3.0.3\ninfo: { title: as written, version: "1" }\n');
    const parsedFile = parsedDocumentPathOf(file);
    fs.mkdirSync(path.dirname(parsedFile), { recursive: true });
    const marked = { openapi: '3.0.3', info: { title: 'from the parse', version: '1' } };
    const write = (sha256: string) =>
      fs.writeFileSync(parsedFile, JSON.stringify({ sha256, document: marked }));
    write(yamlHash(fs.readFileSync(file, 'utf8')));
    expect(parsedDocument(file)).toEqual(marked);
    write(yamlHash('another text'));
    expect(parsedDocument(file).info.title).toBe('as written');
    fs.rmSync(parsedFile);
    expect(parsedDocument(file).info.title).toBe('as written');
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
    fs.rmSync(path.join(projectRoot, 'dist', 'dist'), { recursive: true, force: true });
  }
});
