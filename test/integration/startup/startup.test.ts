import { describe, expect, it } from 'bun:test'
import { freePort } from '../../helpers/ports'

const root = new URL('../../../', import.meta.url).pathname
const out = `${root}test-output/startup-${process.pid}`

/** Runs the server (source or binary) until /health answers or it exits; returns what happened. */
async function boot(cmd: string[], env: Record<string, string>, timeoutMs = 30_000) {
	const port = String(freePort())
	const proc = Bun.spawn(cmd, { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: port, HOST: '127.0.0.1', ...env }, stdout: 'pipe', stderr: 'pipe' })
	const deadline = Date.now() + timeoutMs
	let health: unknown
	while (Date.now() < deadline && proc.exitCode === null) {
		try {
			const res = await fetch(`http://127.0.0.1:${port}/health`)
			if (res.ok) {
				health = await res.json()
				break
			}
		} catch {
			// not up yet
		}
		await Bun.sleep(200)
	}
	if (proc.exitCode === null) proc.kill('SIGTERM')
	const code = await proc.exited
	return { health, code, stderr: await new Response(proc.stderr).text(), stdout: await new Response(proc.stdout).text() }
}

describe('startup', () => {
	it('should refuse a bad gateway config with a message naming file, entry and field', async () => {
		const cfg = `${out}/bad.json`
		await Bun.write(cfg, JSON.stringify({ channels: [{ name: 'x', type: 'warp', base_url: 'https://x', api_key: 'k', models: ['m'] }] }))
		const r = await boot([process.execPath, 'src/index.ts'], { DATA_DIR: `${out}/d1`, GATEWAY_CONFIG: cfg })
		expect(r.code).toBe(1)
		expect(r.stderr).toContain(`${cfg}: line 1, column 26: channels[0] ("x"): field "type"`)
	})

	it('should refuse a misspelt channel setting and a base_url that is not a URL, naming file, entry and field', async () => {
		const cfg = `${out}/bad-settings.yaml`
		await Bun.write(cfg, 'channels:\n  - name: x\n    type: openai\n    base_url: https://x/v1\n    api_key: k\n    models: [m]\n    settings:\n      timeoutz:\n        first_byte_ms: 100\n')
		const r = await boot([process.execPath, 'src/index.ts'], { DATA_DIR: `${out}/d-settings`, GATEWAY_CONFIG: cfg })
		expect(r.code).toBe(1)
		expect(r.stderr).toContain(`${cfg}: line 8, column 7: channels[0] ("x"): unknown field "settings.timeoutz": did you mean "timeouts"?`)
		const url = `${out}/bad-url.json`
		await Bun.write(url, JSON.stringify({ channels: [{ name: 'y', type: 'openai', base_url: 'not a url', api_key: 'k', models: ['m'] }] }))
		const u = await boot([process.execPath, 'src/index.ts'], { DATA_DIR: `${out}/d-url`, GATEWAY_CONFIG: url })
		expect(u.code).toBe(1)
		expect(u.stderr).toContain(`${url}: line 1, column 42: channels[0] ("y"): field "base_url" does not fit: An http:// or https:// URL`)
	})

	it('should refuse an unknown price key rather than bill the model without that price, naming line, model, key and the nearest known key', async () => {
		// An operator's `cached_input_per_mtok` was meant as the cache-read price; skipped, cached input would bill at the input price.
		for (const [name, text, where] of [
			['cached.yaml', 'models:\n  - name: gpt-4o\n    input_per_mtok: 2.5\n    output_per_mtok: 10\n    cached_input_per_mtok: 1.25\n', 'line 5, column 5'],
			['cached.json', '{\n  "models": [\n    { "name": "gpt-4o", "input_per_mtok": 2.5, "output_per_mtok": 10, "cached_input_per_mtok": 1.25 }\n  ]\n}\n', 'line 3, column 71'],
		]) {
			const cfg = `${out}/${name}`
			await Bun.write(cfg, text!)
			const r = await boot([process.execPath, 'src/index.ts'], { DATA_DIR: `${out}/d-${name}`, GATEWAY_CONFIG: cfg })
			expect({ name, code: r.code, health: r.health }).toEqual({ name, code: 1, health: undefined })
			expect(r.stderr).toContain(`${cfg}: ${where}: models[0] ("gpt-4o"): unknown field "cached_input_per_mtok": did you mean "cache_read_per_mtok"? (allowed: name, input_per_mtok,`)
		}
	})

	it('should refuse PostgreSQL without SECRET_KEY, saying why', async () => {
		const r = await boot([process.execPath, 'src/index.ts'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' })
		expect(r.code).toBe(1)
		expect(r.stderr).toContain('SECRET_KEY is required with DATABASE_URL')
	})

	it('should build one executable that starts on a fresh DATA_DIR, serves /health, and starts again on that DATA_DIR', async () => {
		const bin = `${out}/switchboard`
		const build = Bun.spawnSync([process.execPath, 'scripts/build.ts', bin], { cwd: root, stdout: 'pipe', stderr: 'pipe' })
		expect(build.exitCode).toBe(0)
		const r = await boot([bin], { DATA_DIR: `${out}/bin-data` }, 60_000)
		expect(r.health).toMatchObject({ status: 'ok', database: { kind: 'pglite', ok: true } })
		expect(await Bun.file(`${out}/bin-data/secret.key`).exists()).toBe(true)
		expect(r.code).toBe(0) // SIGTERM → clean exit
		// Restarted on the directory it made: its database is found and resumed, nothing loaded again.
		const again = await boot([bin], { DATA_DIR: `${out}/bin-data` }, 60_000)
		expect(again.health).toMatchObject({ status: 'ok', database: { kind: 'pglite', ok: true } })
		expect(again.code).toBe(0)
	}, 120_000)
})
