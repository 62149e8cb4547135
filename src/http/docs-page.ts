/**
 * GET /docs: Swagger UI (swagger-ui-dist, served from node_modules, no CDN) reading the
 * published /openapi.json. "Try it out" sends requests to the service that serves the page.
 */
import express from 'express';
// Not the package's main module: that loads the 1.5 MB UI bundle into the server at start-up.
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path';

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Task Tracker API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// A file, not an inline script, so a Content-Security-Policy can forbid inline scripts.
const init = `SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  displayOperationId: true,
  validatorUrl: null,
  // The document names the default local address; send requests to the service serving this page.
  requestInterceptor: (request) => {
    const url = new URL(request.url, window.location.origin);
    if (url.pathname.startsWith('/v1/')) request.url = window.location.origin + url.pathname + url.search;
    return request;
  },
});
`;

export function docsRouter(): express.Router {
  const router = express.Router();
  router.get('/docs', (_req, res) => {
    res.type('html').send(page);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(init);
  });
  router.use('/docs/assets', express.static(getAbsoluteFSPath(), { index: false }));
  return router;
}
