/**
 * GET /docs in headless Chromium (Debian's, driven by playwright-core): every operation of the
 * document is listed, the server is the page's own origin and the long guide is folded; "Try it
 * out" with a key creates a project. Before Swagger UI has run, and without JavaScript, the page
 * is the HTML's outline of the version.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { loadDocument } from '../../src/http/document';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let browser: Browser;

beforeAll(async () => {
  api = await startTestService();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
  await api.stop();
});

const { definition } = loadDocument();
const operationIds = Object.values(definition.paths ?? {}).flatMap((item) =>
  Object.values(item ?? {}).flatMap((operation) =>
    (operation as { operationId?: string }).operationId
      ? [(operation as { operationId: string }).operationId]
      : [],
  ),
);

/** "Authorize" with the key, as a reader does. */
async function authorize(page: Page, key: string): Promise<void> {
  await page.locator('button.authorize').first().click();
  await page.locator('.auth-container input').fill(key);
  await page.locator('.auth-btn-wrapper button.authorize').click();
  await page.locator('.auth-btn-wrapper button.btn-done').click();
}

/** "Try it out" on the operation, with the body given; the status it shows. */
async function tryOut(page: Page, operationId: string, body?: object): Promise<string | undefined> {
  const operation = page.locator(`[id$="-${operationId}"]`);
  await operation.locator('.opblock-summary').click();
  await operation.locator('button.try-out__btn').click();
  if (body !== undefined)
    await operation.locator('textarea.body-param__text').fill(JSON.stringify(body));
  await operation.locator('button.execute').click();
  const status = operation
    .locator('.live-responses-table tr.response .response-col_status')
    .first();
  await status.waitFor();
  return (await status.textContent())?.trim();
}

it('lists every operation of the document and creates a project with a key', async () => {
  const key = await api.createKey('browser');
  const page = await browser.newPage();
  const failedRequests: string[] = [];
  page.on('requestfailed', (request) => failedRequests.push(request.url()));
  await page.goto(`${api.baseUrl}/docs`);
  await page.locator('.opblock-summary-operation-id').first().waitFor();
  const listed = await page.locator('.opblock-summary-operation-id').allTextContents();
  expect(listed.map((text) => text.trim()).sort()).toEqual([...operationIds].sort());
  expect(failedRequests).toEqual([]);
  // The server offered is this page's own origin, in plain text; the long guide is folded, closed.
  const servers = await page.locator('.servers select option').allTextContents();
  expect(servers.map((text) => text.trim())).toEqual([
    `${new URL(api.baseUrl).origin} - this service`,
  ]);
  expect(await page.locator('.information-container details').count()).toBe(1);
  expect(await page.locator('.information-container details').getAttribute('open')).toBeNull();
  expect(await page.locator('.information-container details summary').textContent()).toBe(
    'Conventions and guides',
  );

  await authorize(page, key);
  expect(await tryOut(page, 'createProject', { name: 'Made in the docs page' })).toBe('201');

  const { data } = await api.client(key).GET('/v1/projects');
  expect(data!.data.map((p) => p.name)).toEqual(['Made in the docs page']);
});

it('shows the version picked, and tries it out in that version', async () => {
  const key = await api.createKey('browser-versions');
  const page = await browser.newPage();
  const sent: Array<string | undefined> = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === '/v1/projects')
      sent.push(request.headers()['api-version']);
  });
  await page.goto(`${api.baseUrl}/docs`);
  await page.locator('.opblock-summary-operation-id').first().waitFor();
  expect(await page.locator('#api-version option').allTextContents()).toEqual([
    '2026-12-15 (newest)',
    '2026-11-28',
  ]);
  await page.locator('#api-version').selectOption('2026-11-28');
  await page.locator('.info .version', { hasText: '2026-11-28' }).waitFor();
  expect(new URL(page.url()).searchParams.get('version')).toBe('2026-11-28');

  await authorize(page, key);
  expect(await tryOut(page, 'listProjects')).toBe('200');
  expect(sent).toEqual(['2026-11-28']);

  // A link to a version opens in it.
  await page.goto(`${api.baseUrl}/docs?version=2026-11-28`);
  await page.locator('.info .version', { hasText: '2026-11-28' }).waitFor();
  expect(await page.locator('#api-version').inputValue()).toBe('2026-11-28');
});

it('shows the outline while Swagger UI loads, then Swagger UI in its place', async () => {
  const page = await browser.newPage();
  // Swagger UI's bundle held back until the outline has been seen.
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/docs/assets/swagger-ui-bundle.js', async (route) => {
    await released;
    await route.continue();
  });
  await page.goto(`${api.baseUrl}/docs`, { waitUntil: 'commit' });
  await page.getByRole('heading', { level: 1, name: definition.info.title }).waitFor();
  expect(await page.locator('#outline code', { hasText: /^createProject$/ }).isVisible()).toBe(
    true,
  );
  release();
  await page.locator('.opblock-summary-operation-id').first().waitFor();
  expect(await page.locator('#outline').count()).toBe(0);
});

it('without JavaScript, lists every operation under its tag and changes version with the form', async () => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  try {
    await page.goto(`${api.baseUrl}/docs`);
    const listed: string[] = [];
    for (const tag of definition.tags ?? []) {
      const region = page.getByRole('region', { name: tag.name });
      // The last column of each row of the tag's table: its operations' ids.
      const ids = await region.locator('tbody tr td:last-child').allTextContents();
      listed.push(...ids);
    }
    expect(listed.sort()).toEqual([...operationIds].sort());
    expect(await page.getByRole('heading', { name: 'Authentication' }).isVisible()).toBe(true);

    await page.getByLabel('API version').selectOption('2026-11-28');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('Version 2026-11-28').waitFor();
    expect(new URL(page.url()).searchParams.get('version')).toBe('2026-11-28');
    expect(await page.getByLabel('API version').inputValue()).toBe('2026-11-28');
  } finally {
    await context.close();
  }
});
