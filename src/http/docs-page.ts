/**
 * GET /docs: Swagger UI (swagger-ui-dist, served from node_modules, no CDN) reading a published
 * version's document (`/openapi/VERSION.json`), the newest unless the reader picks another
 * (`?version=`). "Try it out" sends requests, in the version shown, to the service that serves
 * the page.
 */
import path from 'node:path';
import express from 'express';
// Not the package's main module: that loads the 1.5 MB UI bundle into the server at start-up.
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path';

/**
 * The files of swagger-ui-dist the page loads, and the only ones served: the rest of the package
 * (its demo page, oauth2-redirect.html, package.json, source maps) is nobody's business.
 */
const assets = { stylesheet: 'swagger-ui.css', bundle: 'swagger-ui-bundle.js' };

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Task Tracker API reference</title>
  <link rel="stylesheet" href="/docs/assets/${assets.stylesheet}">
</head>
<body>
  <header><label for="api-version">API version</label> <select id="api-version"></select></header>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/${assets.bundle}"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// A file, not an inline script, so a Content-Security-Policy can forbid inline scripts.
// The page shows a version's document as this service serves it, with two changes for a reader:
// the server listed is this page's own origin (where "Try it out" sends requests, with the
// version's Api-Version), and the long guide of the document's description is folded under one
// line, so the operations come first. The versions to pick from are those of GET /versions.
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
fetch('/versions')
  .then((response) => response.json())
  .then(({ data }) => {
    data.forEach((entry, i) => {
      const option = window.document.createElement('option');
      option.value = entry.version;
      option.textContent = entry.version + (i === 0 ? ' (newest)' : '') + (entry.status === 'deprecated' ? ' (deprecated)' : '');
      picker.append(option);
    });
    const asked = new URLSearchParams(window.location.search).get('version');
    picker.value = data.some((entry) => entry.version === asked) ? asked : data[0].version;
    picker.addEventListener('change', () => {
      window.history.replaceState(null, '', '?version=' + picker.value);
      return show(picker.value);
    });
    return show(picker.value);
  });
`;

export function docsRouter(): express.Router {
  const router = express.Router();
  router.get('/', (_req, res) => {
    res.type('html').send(page);
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
