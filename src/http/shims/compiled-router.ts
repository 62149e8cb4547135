/**
 * openapi-backend's router, with what it recomputes for every request computed once. The
 * document never changes once loaded, but the stock router flattens its operations (a lodash
 * chain) and builds a RegExp for each path template on every match, and openapi-backend parses
 * each request three times (below). The matching rules are the stock router's: a literal path
 * first, then templates, most specific first; a path some template matches but not with this
 * method is a 405.
 */
import {
  OpenAPIRouter,
  type Document,
  type Operation,
  type ParsedRequest,
  type Request,
} from 'openapi-backend';

interface Template {
  pattern: RegExp;
  operation: Operation;
}

/** The stock router's pattern for a template: each `{param}` is one path segment, the rest literal. */
function templatePattern(path: string): RegExp {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^${path
      .split(/\{[^}]+\}/)
      .map(literal)
      .join('[^/]+')}$`,
  );
}

/** How specific a template is: the length of its literal text, as the stock router ranks them. */
const specificity = (path: string) => path.replace(/\{.*?\}/g, '').length;

/** What parsing a request for an operation needs of it, found once. */
interface OperationParse {
  /** The path parameters' pattern as bath-es5 (openapi-backend's) makes it: each `{name}` a segment, the rest as written. */
  pattern: RegExp;
  names: string[];
  /** Whether the stock parse is needed: query parameters in another style than form, or a name used twice. */
  unusual: boolean;
}

function operationParse(operation: Operation): OperationParse {
  const names = [...operation.path.matchAll(/\{([A-Za-z0-9_-]+)\}/g)].map((m) => m[1]);
  const parameters = (operation.parameters ?? []) as Array<{
    in?: string;
    content?: unknown;
    explode?: boolean;
  }>;
  return {
    pattern: new RegExp(`^${operation.path.replace(/\{[A-Za-z0-9_-]+\}/g, '([^\\/]*)')}$`),
    names,
    unusual:
      new Set(names).size !== names.length ||
      parameters.some((p) => p.in === 'query' && (p.content !== undefined || p.explode === false)),
  };
}

/** A copy of a query whose values are text or lists of text, as Express gives it; undefined for any other. */
function copyOfPlainQuery(query: Request['query']): ParsedRequest['query'] | undefined {
  if (typeof query !== 'object') return undefined;
  const copy: ParsedRequest['query'] = Object.create(null);
  for (const name of Object.keys(query)) {
    const value = query[name];
    if (typeof value === 'string') copy[name] = value;
    else if (Array.isArray(value) && value.every((item) => typeof item === 'string'))
      copy[name] = [...value];
    else return undefined;
  }
  return copy;
}

/** The request's method and path as the stock router normalizes them (router.normalizeRequest), without copying the request. */
function methodAndPath(req: Request): { method: string; path: string } {
  let path = req.path?.trim() || '';
  if (!path.startsWith('/')) path = `/${path}`;
  return { method: req.method.trim().toLowerCase(), path: path.split('?')[0] };
}

/**
 * A request's parse for its operation, kept on the request object and on the parse's own query
 * object (see parseRequest), not enumerable (a parse spreads the request's own fields into what it
 * answers). Not in a WeakMap: its values survive young-generation collections, so every request
 * body would be promoted to the old generation, and large bodies would bring full collections.
 */
const lastParse = Symbol('lastParse');

interface ParsedOnce {
  [lastParse]: { operation: Operation; request: ParsedRequest };
}

function keepParse(holder: object, entry: ParsedOnce[typeof lastParse]): void {
  Object.defineProperty(holder, lastParse, { value: entry, writable: true, configurable: true });
}

interface Match {
  operation?: Operation;
  /** Whether some template matches the path (with another method, when there is no operation): a 405. */
  pathMatched: boolean;
}

export class CompiledRouter extends OpenAPIRouter {
  private readonly operations: Operation[];
  private readonly templates: Template[];
  /** Each request object's match: openapi-backend asks for it twice (to parse, then to route). */
  private readonly matches = new WeakMap<Request, Match>();
  private readonly operationParses = new Map<Operation, OperationParse>();

  constructor(definition: Document) {
    // apiRoot '/' (the default): every normalized path is under it, so matching need not check.
    super({ definition });
    this.operations = super.getOperations();
    for (const operation of this.operations)
      this.operationParses.set(operation, operationParse(operation));
    this.templates = this.operations
      .map((operation) => ({ pattern: templatePattern(operation.path), operation }))
      .sort((a, b) => specificity(b.operation.path) - specificity(a.operation.path));
  }

  override getOperations(): Operation[] {
    return this.operations;
  }

  private match(req: Request): Match {
    let match = this.matches.get(req);
    if (match === undefined) {
      match = this.matchPath(req);
      this.matches.set(req, match);
    }
    return match;
  }

  private matchPath(req: Request): Match {
    const { method, path: requestPath } = methodAndPath(req);
    const path = this.normalizePath(requestPath);
    const literal = this.operations.find(
      (operation) => operation.path === path && operation.method === method,
    );
    if (literal) return { operation: literal, pathMatched: true };
    let pathMatched = false;
    for (const { pattern, operation } of this.templates) {
      if (!pattern.test(path)) continue;
      if (operation.method === method) return { operation, pathMatched: true };
      pathMatched = true;
    }
    return { pathMatched };
  }

  override matchOperation(req: Request): Operation | undefined;
  override matchOperation(req: Request, strict: boolean): Operation;
  override matchOperation(req: Request, strict = false): Operation | undefined {
    const { operation, pathMatched } = this.match(req);
    if (operation !== undefined || !strict) return operation;
    // openapi-backend tells 404 from 405 by these messages' first three characters.
    throw new Error(
      pathMatched
        ? '405-methodNotAllowed: this method is not registered for the route'
        : '404-notFound: no route matches request',
    );
  }

  /** For a 405's Allow header: every method the document gives the request's path. */
  allowedMethods(req: Request): string[] {
    const path = this.normalizePath(methodAndPath(req).path);
    const methods = this.templates
      .filter(({ pattern }) => pattern.test(path))
      .map(({ operation }) => operation.method.toUpperCase());
    return [...new Set(methods)];
  }

  /**
   * One parse serves the three that openapi-backend asks for. Before routing, a request that
   * matches an operation gets its parse for that operation: openapi-backend replaces the parse
   * before routing with the one for the operation before any handler sees it, so only a request
   * of no operation is parsed without one (for the 404 or 405 handler). After validation it
   * parses a copy of the request whose query is the query of that parse, which validation has
   * coerced and filled with defaults in place: that parse is the answer again.
   */
  override parseRequest(req: Request, operation?: Operation): ParsedRequest {
    if (operation === undefined) {
      const matched = this.matchOperation(req);
      return matched === undefined ? super.parseRequest(req) : this.parseRequest(req, matched);
    }
    const known =
      (req as Partial<ParsedOnce>)[lastParse] ??
      (typeof req.query === 'object' ? (req.query as Partial<ParsedOnce>)[lastParse] : undefined);
    if (known?.operation === operation) return known.request;
    const request = this.parseFor(req, operation);
    const entry = { operation, request };
    keepParse(req, entry);
    keepParse(request.query, entry);
    return request;
  }

  /**
   * The stock parse for an operation, made as it makes it, without its per-request costs: a copy
   * of every header map and query through lodash, a cookie parse, the path template compiled
   * again, and objects spread into new shapes at each step, which leave every later reader of the
   * parse with a megamorphic property access. What the service's requests never need (a Cookie
   * header, a body still in text, a query string not yet parsed, unusual parameters) is left to
   * the stock parse; a test holds the two to the same result.
   */
  private parseFor(req: Request, operation: Operation): ParsedRequest {
    const { pattern, names, unusual } = this.operationParses.get(operation)!;
    const headers: ParsedRequest['headers'] = {};
    for (const name of Object.keys(req.headers)) headers[name.toLowerCase()] = req.headers[name];
    const query = copyOfPlainQuery(req.query);
    const textBody = req.body && typeof req.body !== 'object';
    if (unusual || query === undefined || textBody || headers.cookie !== undefined)
      return super.parseRequest(req, operation);
    const { method, path } = methodAndPath(req);
    const values = pattern.exec(this.normalizePath(path));
    const params: ParsedRequest['params'] = {};
    if (values !== null)
      names.forEach((name, i) => (params[name] = decodeURIComponent(values[i + 1])));
    return {
      method,
      path,
      query,
      headers,
      body: req.body,
      params,
      cookies: {},
      requestBody: req.body,
    };
  }
}
