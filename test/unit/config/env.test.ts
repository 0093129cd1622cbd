/**
 * Integer settings read from the environment: blank is the default, anything but a whole number in range stops the start
 * naming the variable. DATABASE_POOL_SIZE was read with Number() in the database client: blank gave a pool of 0 and
 * `ten` NaN, neither of which serves a query.
 */
import { describe, expect, it } from 'bun:test'
import { loadEnv } from '../../../src/config/env'

describe('loadEnv', () => {
	it('should take DATABASE_POOL_SIZE as a whole number from 1 to 10000, blank meaning the default of 10', () => {
		expect(loadEnv({}).databasePoolSize).toBe(10)
		expect(loadEnv({ DATABASE_POOL_SIZE: '' }).databasePoolSize).toBe(10)
		expect(loadEnv({ DATABASE_POOL_SIZE: '25' }).databasePoolSize).toBe(25)
		for (const bad of ['0', 'ten', '2.5', '-1']) expect(() => loadEnv({ DATABASE_POOL_SIZE: bad })).toThrow(`DATABASE_POOL_SIZE must be an integer from 1 to 10000, got "${bad}"`)
	})

	it('should take AMBIENT_ENDPOINTS as hosts, IP addresses or *.suffix wildcards, and stop the start naming an entry that is none', () => {
		expect(loadEnv({}).ambientEndpoints).toEqual([])
		expect(loadEnv({ AMBIENT_ENDPOINTS: 'Proxy.Corp.example, *.vpc.example,127.0.0.1,[::1]' }).ambientEndpoints).toEqual(['proxy.corp.example', '*.vpc.example', '127.0.0.1', '::1'])
		for (const bad of ['https://proxy.corp.example', '*', 'a.*.example']) expect(() => loadEnv({ AMBIENT_ENDPOINTS: bad })).toThrow(`AMBIENT_ENDPOINTS must list host names, IP addresses or *.suffix wildcards; "${bad}" is not one`)
	})

	it('should take CORS_ORIGINS as *, none or origins, any origin by default, and stop the start naming an entry that is none', () => {
		expect(loadEnv({}).cors).toEqual({ any: true, origins: new Set() })
		expect(loadEnv({ CORS_ORIGINS: 'none' }).cors).toEqual({ any: false, origins: new Set() })
		expect(loadEnv({ CORS_ORIGINS: 'https://Chat.Example.com/, http://localhost:8080' }).cors).toEqual({ any: false, origins: new Set(['https://chat.example.com', 'http://localhost:8080']) })
		for (const bad of ['chat.example.com', 'https://chat.example.com/app', 'ftp://files.example.com', 'https://*.example.com'])
			expect(() => loadEnv({ CORS_ORIGINS: bad })).toThrow(`CORS_ORIGINS must list '*', 'none' or origins (https://chat.example.com); "${bad}" is not one`)
	})
})
