/**
 * GET /docs without a browser: the page, and of the swagger-ui-dist package only the files the
 * page loads (the browser test checks that the page works).
 */
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

it("shows this service's own origin as the only server, and folds the document's long guide so the operations come first", async () => {
  const script = await (await fetch(`${api.baseUrl}/docs/init.js`)).text();
  const origin = new URL(api.baseUrl).origin;
  // The page's script, run as the browser runs it, with the page's fetch, its version picker and
  // Swagger UI stood in for.
  const picker = {
    value: '',
    options: [] as string[],
    append: (o: any) => picker.options.push(o.textContent),
    addEventListener: () => {},
  };
  const options = await new Promise<{ spec: any; requestInterceptor: (r: any) => any }>(
    (resolve) => {
      const run = new Function('window', 'fetch', 'SwaggerUIBundle', script);
      run(
        {
          location: { origin, search: '' },
          document: { getElementById: () => picker, createElement: () => ({}) },
        },
        (url: string) => fetch(new URL(url, origin)),
        (given: { spec: any; requestInterceptor: (r: any) => any }) => resolve(given),
      );
    },
  );
  // Every version to pick from, the newest shown first, and asked in when trying it out.
  expect(picker.options).toEqual(['2026-12-15 (newest)', '2026-11-28']);
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
