/**
 * openapi-backend's router, with what it recomputes for every request computed once. The
 * document never changes once loaded, but the stock router flattens its operations (a lodash
 * chain) and builds a RegExp for each path template on every match, and parses the same request
 * for the same operation twice (for the handler, then again inside validation). The matching
 * rules are the stock router's: a literal path first, then templates, most specific first; a
 * path some template matches but not with this method is a 405.
 */
import { OpenAPIRouter, type Document, type Operation, type ParsedRequest, type Request } from 'openapi-backend';

interface Template {
  pattern: RegExp;
  operation: Operation;
}

/** The stock router's pattern for a template: each `{param}` is one path segment, the rest literal. */
function templatePattern(path: string): RegExp {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${path.split(/\{[^}]+\}/).map(literal).join('[^/]+')}$`);
}

/** How specific a template is: the length of its literal text, as the stock router ranks them. */
const specificity = (path: string) => path.replace(/\{.*?\}/g, '').length;

export class CompiledRouter extends OpenAPIRouter {
  private readonly operations: Operation[];
  private readonly templates: Template[];
  /** The last parse of each request object with an operation; validation asks for it again. */
  private readonly parsed = new WeakMap<Request, { operation: Operation; request: ParsedRequest }>();

  constructor(definition: Document) {
    // apiRoot '/' (the default): every normalized path is under it, so matching need not check.
    super({ definition });
    this.operations = super.getOperations();
    this.templates = this.operations
      .map((operation) => ({ pattern: templatePattern(operation.path), operation }))
      .sort((a, b) => specificity(b.operation.path) - specificity(a.operation.path));
  }

  override getOperations(): Operation[] {
    return this.operations;
  }

  override matchOperation(req: Request): Operation | undefined;
  override matchOperation(req: Request, strict: boolean): Operation;
  override matchOperation(req: Request, strict = false): Operation | undefined {
    const { method, path: requestPath } = this.normalizeRequest(req);
    const path = this.normalizePath(requestPath);
    const literal = this.operations.find((operation) => operation.path === path && operation.method === method);
    if (literal) return literal;
    let pathMatched = false;
    for (const { pattern, operation } of this.templates) {
      if (!pattern.test(path)) continue;
      if (operation.method === method) return operation;
      pathMatched = true;
    }
    if (!strict) return undefined;
    // openapi-backend tells 404 from 405 by these messages' first three characters.
    throw new Error(pathMatched ? '405-methodNotAllowed: this method is not registered for the route' : '404-notFound: no route matches request');
  }

  /** For a 405's Allow header: every method the document gives the request's path. */
  allowedMethods(req: Request): string[] {
    const path = this.normalizePath(this.normalizeRequest(req).path);
    const methods = this.templates.filter(({ pattern }) => pattern.test(path)).map(({ operation }) => operation.method.toUpperCase());
    return [...new Set(methods)];
  }

  override parseRequest(req: Request, operation?: Operation): ParsedRequest {
    if (operation === undefined) return super.parseRequest(req);
    const last = this.parsed.get(req);
    if (last?.operation === operation) return last.request;
    const request = super.parseRequest(req, operation);
    this.parsed.set(req, { operation, request });
    return request;
  }
}
