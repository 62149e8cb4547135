/**
 * openapi-backend, wired: the document is the route table. Each request is matched to its
 * operationId, authenticated, checked for scope and media type, validated, and only then handed
 * to the handler of that operationId. Every way out that is not a handler's is a problem.
 */
import {
  OpenAPIBackend,
  type Context,
  type Document,
  type Operation,
  type Request,
} from 'openapi-backend';
import type { KnownKeys } from '../api-keys/known-keys';
import type { Principal } from '../db/api-keys-repository';
import type { UnitOfWork } from '../app/unit-of-work';
import type { WriteContext } from '../db/transactions';
import { entityTag, stillCurrent } from '../handlers/entity-tags';
import { operationHandlers, type HandlerParts } from '../handlers';
import {
  changingMethods,
  readingPosts,
  type OperationCheck,
  type OperationHandler,
  type OperationId,
} from '../handlers/operation';
import { requestedVersion } from './api-version';
import { madeVersionSet, olderVersions, type VersionSet } from './older-versions';
import { bearerAuth, refuseUnauthenticated, requireScope } from './authentication';
import { installRouter, type Routes } from './shims/routing';
import type { Exchange } from './exchange';
import type { HttpReply } from './http-reply';
import { requireDocumentedMediaType } from './media-types';
import { responseBodies, type WriteBody } from './response-bodies';
import { refuseIllFormedInput } from './strict-input';
import { methodNotAllowed, routeNotFound } from './routing-problems';
import { unknownFieldFloodCheck } from './unknown-field-flood';
import type { AuthFailureBudget } from './rate-limit';
import { invalidRequest, validationOptions } from './request-validation';

const headerParameters = new WeakMap<Operation, string[]>();

/** The header parameters the operation declares, under their documented names; the names found once per operation. */
function declaredHeaders(context: Context): Record<string, string | undefined> {
  let names = headerParameters.get(context.operation);
  if (names === undefined) {
    const declared = (context.operation.parameters ?? []) as Array<{ in?: string; name?: string }>;
    names = declared.filter((p) => p.in === 'header').map((p) => p.name!);
    headerParameters.set(context.operation, names);
  }
  const headers: Record<string, string | undefined> = {};
  for (const name of names)
    headers[name] = context.request.headers[name.toLowerCase()] as string | undefined;
  return headers;
}

/**
 * Whether the operation changes something, and so goes through the unit of work: by its method,
 * but for the reads that POST a query (readingPosts).
 */
const changes = (context: Context) =>
  (changingMethods as readonly string[]).includes(context.operation.method) &&
  !(readingPosts as readonly string[]).includes(context.operation.operationId!);

function toOperationHandler<K extends OperationId>(
  handler: OperationHandler<K>,
  unitOfWork: UnitOfWork,
  check?: OperationCheck<K>,
) {
  type Input = Parameters<OperationHandler<K>>[0];
  // Every input has one shape, write or not (a spread would give each a shape of its own).
  const inputOf = (
    context: Context,
    exchange: Exchange,
    headers: Record<string, string | undefined>,
    write?: WriteContext,
  ) =>
    ({
      principal: context.security!.bearerAuth,
      path: context.request.params,
      query: context.request.query,
      headers,
      body: context.request.requestBody,
      apiVersion: exchange.requestContext.apiVersion,
      write,
      clientGone: exchange.clientGone,
    }) as Input;
  const answer = async (
    input: Input,
    headers: Record<string, string | undefined>,
  ): Promise<HttpReply> => {
    const reply = await handler(input);
    if (!('body' in reply)) return { status: reply.status, headers: {} };
    const replyHeaders: Record<string, string> = {};
    if (reply.location) replyHeaders.Location = reply.location;
    if (reply.version !== undefined) {
      replyHeaders.ETag = entityTag(reply.version);
      if (stillCurrent(headers['If-None-Match'], reply.version))
        return { status: 304, headers: replyHeaders };
    }
    return { status: reply.status, body: reply.body, headers: replyHeaders };
  };
  /** The change through the unit of work, and a replayed answer marked as one. */
  const change = async (
    context: Context,
    exchange: Exchange,
    headers: Record<string, string | undefined>,
  ): Promise<HttpReply> => {
    const asked = {
      tenantId: (context.security!.bearerAuth as Principal).tenantId,
      requestId: exchange.requestContext.requestId,
      operationId: context.operation.operationId!,
      body: context.request.requestBody,
      pathParameters: context.request.params as Record<string, string>,
      idempotencyKey: headers['Idempotency-Key'],
      apiVersion: exchange.requestContext.apiVersion,
    };
    const { answer: reply, replayed } = await unitOfWork.run(asked, (write) =>
      answer(inputOf(context, exchange, headers, write), headers),
    );
    if (!replayed) return reply;
    return { ...reply, headers: { ...reply.headers, 'Idempotent-Replayed': 'true' } };
  };
  return async (context: Context, exchange: Exchange): Promise<HttpReply> => {
    const headers = declaredHeaders(context);
    if (!changes(context)) return answer(inputOf(context, exchange, headers), headers);
    // Before the transaction: a check may wait on the network, holding no connection.
    const release = await check?.({
      ...inputOf(context, exchange, headers),
      countMore: (requests, why) =>
        exchange.countMore((context.security!.bearerAuth as Principal).keyId, requests, why),
    });
    try {
      return await change(context, exchange, headers);
    } finally {
      await release?.();
    }
  };
}

export interface OperationRouter {
  /**
   * Routes and answers a request, noting in the exchange's request context which operation it was. The
   * request's body is read through the exchange, once the operation and the key are known.
   */
  route(request: Request, exchange: Exchange): Promise<HttpReply>;
  /** The text of a reply's body, by the document's schema for its operation and status (of the request's API version). */
  writeBody(...args: [...Parameters<WriteBody>, apiVersion?: string]): string | undefined;
  /** The reply as the request's API version gives it: the newest version's as it is. */
  answerIn(
    apiVersion: string | undefined,
    operationId: string | undefined,
    reply: HttpReply,
  ): HttpReply;
  /**
   * Compiles the request validators that no request has needed yet, one operation a turn of the
   * event loop, so that the service serves before they are all compiled and no request waits
   * behind the lot; a request that comes first compiles its own.
   */
  compileValidators(): Promise<void>;
}

/** What the operations reach, the unit of work changes go through, and the key checks' parts. */
export interface RouterParts extends HandlerParts {
  definition: Document;
  unitOfWork: UnitOfWork;
  authFailures?: AuthFailureBudget;
  knownKeys?: KnownKeys;
  /** The API versions and their documents: the service's own unless a test gives others. */
  versions?: VersionSet;
}

export async function createOperationRouter({
  definition,
  repositories,
  unitOfWork,
  feed,
  webhookTargets,
  webhookFences,
  bulkFences,
  authFailures,
  knownKeys,
  versions = madeVersionSet(),
}: RouterParts): Promise<OperationRouter> {
  const older = await olderVersions(versions, (request, operationId) => {
    const { 'api-version': _named, ...headers } = request.headers;
    return !api.validator.validateRequest({ ...request, headers }, operationId).errors;
  });
  const supported = versions.registry.map((entry) => entry.version);
  /** Each exchange's request as sent: an older version's is validated and brought up in place. */
  const sent = new WeakMap<Exchange, Request>();
  const api = new OpenAPIBackend({
    definition,
    strict: true,
    // Start-up in a fraction of the time: no check of the document against the OpenAPI schema
    // (the linters do that before it ships), and validators compiled for requests only, once the
    // service serves (compileValidators), not for the responses, which the service does not check;
    // its tests do.
    quick: true,
    coerceTypes: true,
    ...validationOptions,
  });
  const { handlers, checks } = operationHandlers({
    repositories,
    feed,
    webhookTargets,
    webhookFences,
    bulkFences,
  });
  for (const [operationId, handler] of Object.entries(handlers)) {
    const check = checks[operationId as OperationId] as OperationCheck<OperationId> | undefined;
    api.register(
      operationId,
      toOperationHandler(handler as OperationHandler<OperationId>, unitOfWork, check),
    );
  }
  let router: Routes;

  api.registerSecurityHandler(
    'bearerAuth',
    bearerAuth(
      repositories.apiKeys,
      authFailures && knownKeys && { failures: authFailures, knownKeys },
    ),
  );
  api.register({
    notFound: (context: Context) => {
      throw routeNotFound(context.request);
    },
    methodNotAllowed: (context: Context) => {
      throw methodNotAllowed(context.request, router.allowedMethods(context.request));
    },
    postRoutingHandler: (context: Context, { requestContext }: Exchange) => {
      requestContext.operationId = context.operation?.operationId;
      requestContext.route = context.operation?.path;
      if (requestContext.operationId === 'listEvents')
        requestContext.longPoll = Number(context.request.query?.wait ?? 0) > 0;
    },
    unauthorizedHandler: refuseUnauthenticated,
    // Runs once the key is known good, before validation: the key's quota, then the version, a
    // wrong scope or media type outrank what is wrong inside the body, which is read only now.
    postSecurityHandler: async (context: Context, exchange: Exchange) => {
      if (!context.security?.authorized) return;
      const principal = context.security.bearerAuth as Principal;
      await exchange.countRequest(principal.keyId);
      const apiVersion = (exchange.requestContext.apiVersion = requestedVersion(
        context.request.headers['api-version'] as string | undefined,
        principal.apiVersion,
        supported,
      ));
      // An operation a newer version added is answered as the request's version routes it.
      if (older.isOlder(apiVersion))
        older.refuseAdded(apiVersion, context.operation.operationId!, context.request);
      requireScope(context);
      requireDocumentedMediaType(context);
      context.request.requestBody = await exchange.readBody(
        unknownFieldFloodCheck(context.operation),
      );
      refuseIllFormedInput(context);
      if (older.isOlder(apiVersion))
        older.bringUp(
          apiVersion,
          context.operation.operationId!,
          sent.get(exchange)!,
          context.request,
        );
    },
    validationFail: (context: Context) => {
      throw invalidRequest(context.validation.errors ?? [], context.operation);
    },
    notImplemented: (context: Context) => {
      throw new Error(`no handler for ${context.operation.operationId}`);
    },
  });
  await api.init();
  router = installRouter(api);
  const problemSchema = (
    api.definition.components!.schemas as Record<string, Record<string, unknown>>
  ).Problem;
  const writeNewest = responseBodies(router.getOperations(), problemSchema);
  return {
    route: (request, exchange) => {
      sent.set(exchange, request);
      return api.handleRequest(request, exchange) as Promise<HttpReply>;
    },
    writeBody: (reply, operationId, requestId, apiVersion) =>
      (older.isOlder(apiVersion) ? older.writeBody(apiVersion) : writeNewest)(
        reply,
        operationId,
        requestId,
      ),
    answerIn: (apiVersion, operationId, reply) =>
      older.isOlder(apiVersion) && operationId !== undefined
        ? older.bringDown(apiVersion, operationId, reply)
        : reply,
    async compileValidators() {
      for (const { operationId } of router.getOperations()) {
        await new Promise((resolve) => setImmediate(resolve));
        api.validator.getRequestValidatorsForOperation(operationId!);
      }
    },
  };
}
