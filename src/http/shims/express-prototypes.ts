/**
 * Requests and responses born with an Express app's prototypes. Express otherwise swaps in those
 * prototypes (`Object.setPrototypeOf`) as each request arrives, which costs far more than its
 * routing: V8 then meets objects of an unfamiliar shape throughout node's http code and leaves its
 * fast paths. With the prototype already in place, the swap does nothing.
 */
import http from 'node:http';
import type express from 'express';
import { libraryShims } from '../../config';

/** The classes node's HTTP server makes each request and response of: node's own with LIBRARY_SHIMS=off. */
export function requestClasses(
  app: express.Express,
): Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  if (!libraryShims) return {};
  return {
    IncomingMessage: bornWith(http.IncomingMessage, app.request),
    ServerResponse: bornWith(http.ServerResponse, app.response),
  };
}

function bornWith<T extends typeof http.IncomingMessage | typeof http.ServerResponse>(
  base: T,
  prototype: object,
): T {
  // A function, not a class: a class's prototype cannot be replaced.
  function Constructor(this: object, ...args: unknown[]) {
    Reflect.apply(base, this, args);
  }
  Constructor.prototype = prototype;
  return Constructor as unknown as T;
}
