/** A bench's calls of the service's API with one key, timed; an answer of another status than expected throws. */
export type ApiCall = <T>(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  expected?: number,
) => Promise<{ body: T; requestId: string; ms: number }>;

/** An answer of another status than expected. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function apiClient(baseUrl: string, key: string): ApiCall {
  return async (method, path, body, expected = method === 'DELETE' ? 204 : 200) => {
    const started = performance.now();
    const response = await fetch(baseUrl + path, {
      method,
      headers: {
        Authorization: `Bearer ${key}`,
        ...(body !== undefined && { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    if (response.status !== expected)
      throw new ApiError(
        response.status,
        `${method} ${path}: ${response.status} ${text.slice(0, 2000)}`,
      );
    return {
      body: text === '' ? (undefined as never) : JSON.parse(text),
      requestId: response.headers.get('x-request-id') ?? '',
      ms,
    };
  };
}
