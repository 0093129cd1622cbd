/**
 * A server started as operators start it (`bun src/index.ts`) runs with the runtime settings of
 * src/lib/runtime-settings.ts: those missing from its environment are added by relaunching the same process (same
 * PID), and those the operator set are kept as given. Read from the running process's own environment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { RUNTIME_DEFAULTS, missingSettings } from '../../../src/lib/runtime-settings'
import { type Deployment, deploy } from './server-process'

/** The environment the process with this PID runs with now (after any execve). */
function environOf(pid: number): Record<string, string> {
	const out: Record<string, string> = {}
	for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
		const eq = entry.indexOf('=')
		if (eq > 0) out[entry.slice(0, eq)] = entry.slice(eq + 1)
	}
	return out
}

let d: Deployment

beforeAll(async () => {
	d = await deploy({ channels: [], models: [] } as never)
})

afterAll(async () => {
	await d.close()
})

describe('runtime settings', () => {
	it('should name what an environment lacks, and nothing it has', () => {
		expect(missingSettings({})).toEqual({ ...RUNTIME_DEFAULTS })
		expect(missingSettings({ ...RUNTIME_DEFAULTS })).toEqual({})
		expect(missingSettings({ BUN_CONFIG_MAX_HTTP_REQUESTS: '100', BUN_JSC_heapGrowthMaxIncrease: '2' })).toEqual({ BUN_JSC_minEdenToOldGenerationRatio: '0.4' })
	})

	it.skipIf(process.platform !== 'linux')('should run with every default when none is set', async () => {
		// JavaScriptCore lists the options that differ from its defaults at start (after the relaunch too).
		const server = await d.start({ BUN_JSC_dumpOptions: '1' })
		const env = environOf(server.proc.pid)
		for (const [k, v] of Object.entries(RUNTIME_DEFAULTS)) expect(env[k]).toBe(v)
		expect(server.output()).not.toContain('relaunch')
		// The runtime took the collector settings, not only the environment.
		expect(server.errors()).toContain(`minEdenToOldGenerationRatio=${RUNTIME_DEFAULTS.BUN_JSC_minEdenToOldGenerationRatio}`)
		expect(server.errors()).toContain(`heapGrowthMaxIncrease=${RUNTIME_DEFAULTS.BUN_JSC_heapGrowthMaxIncrease}`)
		server.proc.kill()
		await server.exited
	}, 60_000)

	it.skipIf(process.platform !== 'linux')("should keep the operator's values and add only the missing ones", async () => {
		const server = await d.start({ BUN_JSC_minEdenToOldGenerationRatio: '0.5' })
		const env = environOf(server.proc.pid)
		expect(env.BUN_JSC_minEdenToOldGenerationRatio).toBe('0.5')
		expect(env.BUN_CONFIG_MAX_HTTP_REQUESTS).toBe(RUNTIME_DEFAULTS.BUN_CONFIG_MAX_HTTP_REQUESTS!)
		server.proc.kill()
		await server.exited
	}, 60_000)

	it.skipIf(process.platform !== 'linux')('should keep every value the operator set', async () => {
		const server = await d.start({ BUN_CONFIG_MAX_HTTP_REQUESTS: '300', BUN_JSC_minEdenToOldGenerationRatio: '0.4' })
		const env = environOf(server.proc.pid)
		expect(env.BUN_CONFIG_MAX_HTTP_REQUESTS).toBe('300')
		expect(env.BUN_JSC_minEdenToOldGenerationRatio).toBe('0.4')
		server.proc.kill()
		await server.exited
	}, 60_000)
})
