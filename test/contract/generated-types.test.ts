/**
 * The document's types as clients generate them: openapi-typescript with its default settings and
 * with the repository's (`--default-non-nullable false`), each compiled with the README's
 * typed-client example. A schema `default` on a request field would make the field required under
 * the default settings, and the example, which leaves it out, would not compile.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openapiDocumentPath, projectRoot } from '../../src/paths';

const bin = (name: string) => path.join(projectRoot, 'node_modules', '.bin', name);

/** The README's typed-client example, as a module importing `types`: its top-level awaits inside a function. */
function readmeExample(types: string): string {
  const readme = fs.readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
  const block = /### A typed client[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme);
  expect(block).not.toBeNull();
  const lines = block![1].split('\n');
  const imports = lines
    .filter((line) => line.startsWith('import '))
    .map((line) => line.replace("'./generated/api'", `'./${types}'`));
  const body = lines.filter((line) => !line.startsWith('import '));
  return [...imports, 'export async function example(): Promise<void> {', ...body, '}', ''].join(
    '\n',
  );
}

const settings = {
  // One tsc run compiles the example against both: each file names its settings in any error.
  'default-settings': [],
  'repository-settings': ['--default-non-nullable', 'false'],
};

it("compiles the README example against types generated with the generator's default settings and with the repository's", () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'generated-types-'));
  try {
    for (const [name, flags] of Object.entries(settings)) {
      const generated = spawnSync(
        bin('openapi-typescript'),
        [openapiDocumentPath, ...flags, '-o', path.join(folder, `${name}.ts`)],
        { encoding: 'utf8' },
      );
      expect([name, generated.status]).toEqual([name, 0]);
      fs.writeFileSync(path.join(folder, `example-${name}.ts`), readmeExample(name));
    }
    fs.writeFileSync(
      path.join(folder, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          module: 'commonjs',
          moduleResolution: 'node',
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [path.join(projectRoot, 'node_modules', '@types')],
          baseUrl: '.',
          paths: { 'openapi-fetch': [path.join(projectRoot, 'node_modules', 'openapi-fetch')] },
        },
        files: Object.keys(settings).map((name) => `example-${name}.ts`),
      }),
    );
    const compiled = spawnSync(bin('tsc'), ['-p', path.join(folder, 'tsconfig.json')], {
      encoding: 'utf8',
    });
    expect(compiled.stdout + compiled.stderr).toBe('');
    expect(compiled.status).toBe(0);
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
});
