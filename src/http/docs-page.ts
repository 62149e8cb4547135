/**
 * GET /docs: Swagger UI (swagger-ui-dist, served from node_modules, no CDN) reading a published
 * version's document (`/openapi/VERSION.json`), the newest unless the reader picks another
 * (`?version=`). "Try it out" sends requests, in the version shown, to the service that serves
 * the page. The HTML itself holds the version's outline (docs-outline.ts): the page before
 * Swagger UI's bundle has run, or without JavaScript; Swagger UI renders over it.
 */
import path from 'node:path';
import express from 'express';
import type { Document } from 'openapi-backend';
// Not the package's main module: that loads the 1.5 MB UI bundle into the server at start-up.
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path';
import { docsOutline } from './docs-outline';
import { escapeHtml } from './html';
import type { PublishedVersion } from './published-versions';

/**
 * The files of swagger-ui-dist the page loads, and the only ones served: the rest of the package
 * (its demo page, oauth2-redirect.html, package.json, source maps) is nobody's business.
 */
const assets = { stylesheet: 'swagger-ui.css', bundle: 'swagger-ui-bundle.js' };

export interface DocsPageOptions {
  /** The versions to pick from, newest first, as `GET /versions` lists them. */
  versions: readonly Pick<PublishedVersion, 'version' | 'status'>[];
  /** A listed version's document. */
  definitionOf: (version: string) => Document;
}

/**
 * The page showing `shown`. The picker is a form, so that a reader without JavaScript changes
 * version by sending it; with JavaScript the script shows the version picked at once. Its value
 * is not restored by the browser (`autocomplete="off"`): it must name the version shown. A few
 * inline rules set the outline as Swagger UI sets its page (the CSP allows inline styles, not scripts).
 */
function page(shown: string, { versions, definitionOf }: DocsPageOptions): string {
  const document = definitionOf(shown);
  const options = versions.map(
    ({ version, status }, i) =>
      `<option value="${escapeHtml(version)}"${version === shown ? ' selected' : ''}>${escapeHtml(version)}` +
      `${i === 0 ? ' (newest)' : ''}${status === 'deprecated' ? ' (deprecated)' : ''}</option>`,
  );
  const links = ['yaml', 'json'].map((format) => ({
    href: `/openapi/${shown}.${format}`,
    text: format.toUpperCase(),
  }));
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(document.info.title)} reference</title>
  <link rel="stylesheet" href="/docs/assets/${assets.stylesheet}">
  <style>#outline{font-family:sans-serif;color:#3b4151;max-width:1460px;margin:0 auto;padding:0 20px}#outline th{text-align:left}#outline th,#outline td{padding:2px 16px 2px 0}</style>
  <script src="/docs/assets/${assets.bundle}" defer></script>
  <script src="/docs/init.js" defer></script>
</head>
<body>
  <header>
    <form action="/docs" method="get">
      <label for="api-version">API version</label>
      <select id="api-version" name="version" autocomplete="off">${options.join('')}</select>
      <noscript><button type="submit">Show</button></noscript>
    </form>
  </header>
  <div id="swagger-ui">
${docsOutline(document, links)}
  </div>
</body>
</html>
`;
}

// A file, not an inline script, so a Content-Security-Policy can forbid inline scripts.
// The page shows a version's document as this service serves it, with two changes for a reader:
// the server listed is this page's own origin (where "Try it out" sends requests, with the
// version's Api-Version), and the long guide of the document's description is folded under one
// line, so the operations come first. The version shown first is the one the page's HTML picks.
export const docsInitScript = `const picker = window.document.getElementById('api-version');
const show = (version) =>
  fetch('/openapi/' + version + '.json')
    .then((response) => response.json())
    .then((spec) => {
      spec.servers = [{ url: window.location.origin, description: 'this service' }];
      const guide = spec.info.description || '';
      const [summary, ...rest] = guide.split('\\n\\n');
      spec.info.description = summary + '\\n\\n<details><summary>Conventions and guides</summary>\\n\\n' + rest.join('\\n\\n') + '\\n\\n</details>\\n';
      SwaggerUIBundle({
        spec,
        dom_id: '#swagger-ui',
        deepLinking: true,
        displayOperationId: true,
        validatorUrl: null,
        requestInterceptor: (request) => {
          request.headers['Api-Version'] = version;
          return request;
        },
      });
    });
picker.addEventListener('change', () => {
  window.history.replaceState(null, '', '?version=' + picker.value);
  return show(picker.value);
});
show(picker.value);
`;

export function docsRouter(options: DocsPageOptions): express.Router {
  const router = express.Router();
  // Made when first asked for, one per version: a few kilobytes each.
  const pages = new Map<string, string>();
  router.get('/', (req, res) => {
    // An unknown or repeated `version` shows the newest, as a missing one does.
    const asked = req.query.version;
    const known = options.versions.find((entry) => entry.version === asked);
    const shown = (known ?? options.versions[0]).version;
    if (!pages.has(shown)) pages.set(shown, page(shown, options));
    res.type('html').send(pages.get(shown));
  });
  router.get('/init.js', (_req, res) => {
    res.type('application/javascript').send(docsInitScript);
  });
  const folder = getAbsoluteFSPath();
  for (const file of Object.values(assets)) {
    router.get(`/assets/${file}`, (_req, res, next) =>
      res.sendFile(path.join(folder, file), (error) => error && next(error)),
    );
  }
  return router;
}
