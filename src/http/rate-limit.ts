/**
 * Per-key rate limits with express-rate-limit: IETF RateLimit headers (draft 8) on every /v1
 * answer, a 429 problem with Retry-After past the limit. Counts live in memory, or in Redis
 * (rate-limit-redis) when several instances must enforce one limit.
 */
import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { Logger } from 'pino';
import { RedisStore } from 'rate-limit-redis';
import { createClient } from 'redis';
import { sendReply } from './http-reply';
import { problemFor, ProblemError } from './problems';

export interface RateLimiter {
  middleware: RequestHandler;
  close(): Promise<void>;
}

/** The bucket a request counts against: its bearer key (hashed: Redis never sees a key), else its address. */
function bucketOf(authorization: string | undefined, ip: string | undefined): string {
  const token = authorization?.match(/^Bearer +(\S+)/i)?.[1];
  return token ? 'key:' + createHash('sha256').update(token).digest('hex') : 'ip:' + ipKeyGenerator(ip ?? '');
}

export async function createRateLimiter(options: { perMinute: number; redisUrl?: string; logger: Logger }): Promise<RateLimiter | undefined> {
  const { perMinute, redisUrl, logger } = options;
  if (perMinute === 0) return undefined;
  const redis = redisUrl ? createClient({ url: redisUrl }) : undefined;
  if (redis) {
    redis.on('error', (error) => logger.warn({ err: error }, 'redis unavailable; rate limits are not enforced meanwhile'));
    await redis.connect();
  }
  const middleware = rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: `${perMinute}-in-1min`,
    keyGenerator: (req) => bucketOf(req.get('Authorization'), req.ip),
    // A broken Redis must not take the API down with it.
    passOnStoreError: true,
    // The check reads the key generator's source for req.ip; bucketOf does pass it through ipKeyGenerator.
    validate: { keyGeneratorIpFallback: false },
    store: redis ? new RedisStore({ prefix: 'task-tracker:rate-limit:', sendCommand: (...args: string[]) => redis.sendCommand(args) }) : undefined,
    handler: (_req, res) => {
      const retryAfter = res.getHeader('Retry-After');
      sendReply(res, problemFor(new ProblemError('rate-limited', `This API key has used its ${perMinute} requests for this minute; retry after ${retryAfter} seconds.`)));
    },
  });
  return {
    middleware,
    async close() {
      if (redis?.isOpen) await redis.quit();
    },
  };
}
