/**
 * The server started as an operator starts it (`bun src/index.ts`), for tests of what a start refuses.
 * @module
 */
import { freePort } from './ports'

const root = new URL('../../', import.meta.url).pathname

/**
 * Runs `bun src/index.ts` with `env` (over a bare PATH/HOME, a free port and a data directory of its own under
 * test-output/, named after `name`) until it exits (a refused start) or 15 s pass; returns its exit code and stderr.
 */
export async function startUntilExit(name: string, env: Record<string, string>): Promise<{ code: number; stderr: string }> {
	const proc = Bun.spawn([process.execPath, 'src/index.ts'], {
		cwd: root,
		env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: String(freePort()), HOST: '127.0.0.1', DATA_DIR: `${root}test-output/${name}-${process.pid}`, ...env },
		stdout: 'pipe',
		stderr: 'pipe',
	})
	const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000)
	const code = await proc.exited
	clearTimeout(timer)
	return { code, stderr: await new Response(proc.stderr).text() }
}
