/**
 * GET /docs without a browser: the page, whose HTML itself outlines the version shown (what a
 * reader without JavaScript gets), and of the swagger-ui-dist package only the files the page
 * loads (the browser test checks that the page works).
 */
import type { Document } from 'openapi-backend';
import { docsOutline } from '../../src/http/docs-outline';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;

beforeAll(async () => {
  api = await startTestService();
});
afterAll(() => api.stop());

it('serves every file the page loads', async () => {
  const page = await fetch(`${api.baseUrl}/docs`);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  const loaded = [...(await page.text()).matchAll(/(?:href|src)="(\/docs\/[^"]+)"/g)].map(
    (m) => m[1],
  );
  expect(loaded).toEqual([
    '/docs/assets/swagger-ui.css',
    '/docs/assets/swagger-ui-bundle.js',
    '/docs/init.js',
  ]);
  for (const path of loaded) {
    const res = await fetch(api.baseUrl + path);
    expect([path, res.status, (await res.arrayBuffer()).byteLength > 0]).toEqual([path, 200, true]);
  }
});

it.each([
  '/docs/assets/',
  '/docs/assets/index.html',
  '/docs/assets/oauth2-redirect.html',
  '/docs/assets/package.json',
  '/docs/assets/swagger-ui-bundle.js.map',
  '/docs/assets/swagger-ui.css.map',
  '/docs/assets/swagger-ui.js',
  '/docs/assets/absolute-path.js',
  '/docs/assets/swagger-initializer.js',
  '/docs/assets/%2e%2e/package.json',
])('serves nothing else of the package: %s is 404', async (path) => {
  const res = await api.send('GET', path);
  expect([res.status, res.json.type]).toEqual([404, '/problems/route-not-found']);
});

/** The words of some HTML as a reader sees them: tags dropped, entities read, spaces collapsed. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

/** Each operation the outline lists, as `Tag: METHOD path operationId summary`, its tag the heading of its section. */
const outlined = (html: string) =>
  [...html.matchAll(/<section[^>]*>\s*<h3[^>]*>(.*?)<\/h3>([\s\S]*?)<\/section>/g)].flatMap(
    ([, tag, section]) =>
      [...section.matchAll(/<tr>((?:<td>.*?<\/td>){4})<\/tr>/g)].map(([, row]) => {
        const [method, path, summary, operationId] = [...row.matchAll(/<td>(.*?)<\/td>/g)].map(
          ([, cell]) => textOf(cell),
        );
        return `${textOf(tag)}: ${method} ${path} ${operationId} ${summary}`;
      }),
  );

/** The same, from the document. */
const documented = (document: Document) =>
  Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, any>)
      .filter(([, operation]) => typeof operation?.operationId === 'string')
      .flatMap(([method, operation]) =>
        (operation.tags as string[]).map(
          (tag) =>
            `${tag}: ${method.toUpperCase()} ${path} ${operation.operationId} ${operation.summary}` +
            (operation.deprecated ? ' (deprecated)' : ''),
        ),
      ),
  );

describe.each([
  ['/docs', '2026-12-15'],
  ['/docs?version=2026-11-28', '2026-11-28'],
  // Anything else shows the newest, as no version does.
  ['/docs?version=2099-01-01', '2026-12-15'],
  ['/docs?version=2026-11-28&version=2026-12-15', '2026-12-15'],
])('%s, read without JavaScript', (path, version) => {
  let html: string;
  let document: Document;
  beforeAll(async () => {
    html = await (await fetch(api.baseUrl + path)).text();
    document = (await (await fetch(`${api.baseUrl}/openapi/${version}.json`)).json()) as Document;
  });

  it("lists every operation of the version's document under its tag, with its summary", () => {
    const expected = documented(document);
    expect(expected.length).toBeGreaterThan(0);
    expect(outlined(html).sort()).toEqual(expected.sort());
  });

  it('names the API, the version and how to authenticate, and picks the version in a form', () => {
    const text = textOf(html);
    expect(textOf(/<h1>(.*?)<\/h1>/.exec(html)![1])).toBe(document.info.title);
    expect(text).toContain(`Version ${document.info.version}: the document as YAML, JSON`);
    expect(document.info.version).toBe(version);
    const { bearerAuth } = document.components!.securitySchemes as Record<string, any>;
    expect(text).toContain(bearerAuth.description.replace(/`/g, '').replace(/\s+/g, ' ').trim());
    expect(text).toContain('Authorization: Bearer <API_KEY>');
    expect(html).toContain(`<a href="/openapi/${version}.yaml">YAML</a>`);
    // Sent without JavaScript, the picker asks for the page of the version picked.
    expect(html).toMatch(/<form action="\/docs" method="get">\s*<label for="api-version">/);
    expect(html).toContain('<select id="api-version" name="version" autocomplete="off">');
    expect(
      [...html.matchAll(/<option value="([^"]+)"( selected)?>([^<]*)<\/option>/g)].map(
        ([, value, selected, label]) => [value, Boolean(selected), label],
      ),
    ).toEqual([
      ['2026-12-15', version === '2026-12-15', '2026-12-15 (newest)'],
      ['2026-11-28', version === '2026-11-28', '2026-11-28'],
    ]);
  });
});

it('marks a deprecated version so in the picker', async () => {
  const deprecating = await startTestService({
    config: { apiVersionsDeprecated: new Map([['2026-11-28', undefined]]) },
  });
  try {
    const html = await (await fetch(`${deprecating.baseUrl}/docs`)).text();
    expect(html).toContain('<option value="2026-11-28">2026-11-28 (deprecated)</option>');
  } finally {
    await deprecating.stop();
  }
});

describe('docsOutline', () => {
  const summary = `Read <script>alert("x")</script> & 'co'`;
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'A <b>bold</b> API',
      version: '1 & 2',
      description: 'Keys are `<KEY>` & more.\n\nA guide not shown.',
    },
    tags: [{ name: 'Unused' }, { name: '<Things>', description: 'Things & `<stuff>`' }],
    components: {
      securitySchemes: {
        key: { type: 'apiKey', in: 'header', name: 'X-Key', description: 'Send `X-Key: <key>`.' },
      },
    },
    paths: {
      '/things/{id}': {
        parameters: [],
        get: { operationId: 'readThing', summary, tags: ['<Things>'], responses: {} },
        delete: { operationId: 'dropThing', summary: 'Drop', deprecated: true, responses: {} },
      },
    },
  } as unknown as Document;
  const html = docsOutline(document, [{ href: '/doc?a=1&b="2"', text: 'YAML' }]);

  it("escapes the document's text everywhere, its code spans made <code>", () => {
    expect(html).toContain(
      "<td>Read &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; 'co'</td>",
    );
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<b>');
    expect(html).toContain('<h1>A &lt;b&gt;bold&lt;/b&gt; API</h1>');
    expect(html).toContain(
      '<p>Version <strong>1 &amp; 2</strong>: the document as <a href="/doc?a=1&amp;b=&quot;2&quot;">YAML</a></p>',
    );
    expect(html).toContain('<p>Keys are <code>&lt;KEY&gt;</code> &amp; more.</p>');
    expect(html).not.toContain('A guide not shown');
    expect(html).toContain(
      '<p><code>key</code>, an API key in the header X-Key: Send <code>X-Key: &lt;key&gt;</code>.</p>',
    );
    expect(html).toContain(
      '<h3 id="outline-tag-0">&lt;Things&gt;</h3>\n<p>Things &amp; <code>&lt;stuff&gt;</code></p>',
    );
  });

  it('groups the operations as Swagger UI does: declared tags that have some, then the untagged as "default"', () => {
    expect(outlined(html)).toEqual([
      `<Things>: GET /things/{id} readThing ${summary}`,
      'default: DELETE /things/{id} dropThing Drop (deprecated)',
    ]);
  });
});

it("shows this service's own origin as the only server, and folds the document's long guide so the operations come first", async () => {
  const script = await (await fetch(`${api.baseUrl}/docs/init.js`)).text();
  const origin = new URL(api.baseUrl).origin;
  // The page's script, run as the browser runs it, with the page's fetch, its version picker (on
  // the version the page's HTML selects) and Swagger UI stood in for.
  const picker = { value: '2026-12-15', addEventListener: () => {} };
  const options = await new Promise<{ spec: any; requestInterceptor: (r: any) => any }>(
    (resolve) => {
      const run = new Function('window', 'fetch', 'SwaggerUIBundle', script);
      run(
        {
          location: { origin },
          document: { getElementById: () => picker },
        },
        (url: string) => fetch(new URL(url, origin)),
        (given: { spec: any; requestInterceptor: (r: any) => any }) => resolve(given),
      );
    },
  );
  // The version picked is asked in when trying it out.
  expect(options.requestInterceptor({ headers: {} }).headers).toEqual({
    'Api-Version': '2026-12-15',
  });
  expect(options.spec.servers).toEqual([{ url: origin, description: 'this service' }]);
  const { description } = options.spec.info as { description: string };
  const document = (await (await fetch(`${api.baseUrl}/openapi.json`)).json()) as {
    info: { description: string };
  };
  const published = document.info.description;
  const [summary] = published.split('\n\n');
  expect(description.startsWith(`${summary}\n\n<details><summary>`)).toBe(true);
  expect(description.trimEnd().endsWith('</details>')).toBe(true);
  expect(description.split('\n\n').length).toBe(published.split('\n\n').length + 2);
  expect(JSON.stringify(options.spec.servers)).not.toContain('`');
});
