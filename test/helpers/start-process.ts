/**
 * The server started as an operator starts it (`bun src/index.ts`), for tests of what a start refuses.
 * @module
 */
import { freePort } from './ports'

const root = new URL('../../', import.meta.url).pathname

/**
 * Runs `bun src/index.ts` with `env` (over a bare PATH/HOME, a free port and a data directory of its own under
 * test-output/, named after `name`) until it exits (a refused start) or 30 s pass, as long as `startProcess` waits for
 * a start (a refused start takes ~1 s; CI once saw one pass 15 s on a machine loaded beside it); returns its exit code
 * and stderr.
 */
export async function startUntilExit(name: string, env: Record<string, string>): Promise<{ code: number; stderr: string }> {
	const proc = Bun.spawn([process.execPath, 'src/index.ts'], {
		cwd: root,
		env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: String(freePort()), HOST: '127.0.0.1', DATA_DIR: `${root}test-output/${name}-${process.pid}`, ...env },
		stdout: 'pipe',
		stderr: 'pipe',
	})
	const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000)
	const code = await proc.exited
	clearTimeout(timer)
	return { code, stderr: await new Response(proc.stderr).text() }
}

/**
 * Runs `bun src/index.ts` with `env` (as startUntilExit does) until /health answers; throws with its stderr if it exits
 * or 30 s pass first. `stop` ends it with SIGTERM and gives its exit code and what it wrote (its log lines are on stdout);
 * `signal` sends it another.
 */
export async function startProcess(
	name: string,
	env: Record<string, string>,
): Promise<{ url: string; signal: (sig: NodeJS.Signals) => void; exited: Promise<number>; stop: () => Promise<{ code: number; stdout: string; stderr: string }> }> {
	const port = freePort()
	const proc = Bun.spawn([process.execPath, 'src/index.ts'], {
		cwd: root,
		env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: `${root}test-output/${name}-${process.pid}`, ...env },
		stdout: 'pipe',
		stderr: 'pipe',
	})
	const url = `http://127.0.0.1:${port}`
	const [stdout, stderr] = [new Response(proc.stdout).text(), new Response(proc.stderr).text()]
	const stop = async () => {
		proc.kill('SIGTERM')
		return { code: await proc.exited, stdout: await stdout, stderr: await stderr }
	}
	for (const deadline = Date.now() + 30_000; Date.now() < deadline && proc.exitCode === null; await Bun.sleep(200))
		if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) return { url, stop, signal: (sig) => proc.kill(sig), exited: proc.exited }
	const said = await stop()
	throw new Error(`${name}: the server did not start: ${said.stderr}${said.stdout}`)
}
