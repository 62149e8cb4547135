/**
 * GET /docs: Swagger UI (swagger-ui-dist, served from node_modules, no CDN) reading the
 * published /openapi.json. "Try it out" sends requests to the service that serves the page.
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
  <div id="swagger-ui"></div>
  <script src="/docs/assets/${assets.bundle}"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// A file, not an inline script, so a Content-Security-Policy can forbid inline scripts.
// The page shows the document as this service serves it, with two changes for a reader: the
// server listed is this page's own origin (where "Try it out" sends requests), and the long
// guide of the document's description is folded under one line, so the operations come first.
export const docsInitScript = `fetch('/openapi.json')
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
    });
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
