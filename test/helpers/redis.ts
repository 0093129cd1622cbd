/**
 * Redis for tests: the machine's (REDIS_URL, default 127.0.0.1:6379), with a key and channel prefix (REDIS_PREFIX)
 * of the test file's own. Every fresh test database numbers accounts, keys and channels from 1, and pub/sub channels
 * ignore the Redis database number, so files running at once (`bun test --parallel`, or two checkouts on one machine)
 * would otherwise count each other's requests and hear each other's invalidations.
 * @module
 */
import { relative } from 'node:path'

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * The prefix for the test file at `file` (its `import.meta.path`): every instance in that file shares it.
 * @example redisPrefix(import.meta.path) // 'test:integration/admin/key-cache.test.ts:4242:'
 */
export const redisPrefix = (file: string): string => `test:${relative(`${import.meta.dir}/..`, file)}:${process.pid}:`

/** REDIS_URL and REDIS_PREFIX for an instance started by the test file at `file`. */
export const redisEnv = (file: string): { REDIS_URL: string; REDIS_PREFIX: string } => ({ REDIS_URL, REDIS_PREFIX: redisPrefix(file) })
