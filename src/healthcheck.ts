/**
 * `switchboard healthcheck` (and `bun src/index.ts healthcheck`): asks the server running on this machine for
 * `GET /health` and exits 0 when it answers 200, else 1. Container health checks run it (the Dockerfile's
 * HEALTHCHECK), since the image has no curl; it reads the same PORT, HOST and TLS_CERT_FILE the server does, from the
 * environment the container gave both.
 * @module
 */
import { loadEnv } from './config/env'

/** How long the probe waits for the answer (a health check's own timeout is longer). */
const PROBE_TIMEOUT_MS = 4_000

/**
 * Where a client on this machine reaches the server these variables configure, read as the server reads them
 * (loadEnv: its defaults, its checks): a wildcard listen address is reached on loopback.
 */
export function probeUrl(vars: Record<string, string | undefined>): string {
	const { host, port, tls } = loadEnv(vars)
	const local = host === '0.0.0.0' ? '127.0.0.1' : host === '::' || host === '[::]' ? '[::1]' : host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
	return `${tls ? 'https' : 'http'}://${local}:${port}/health`
}

/** Exit status of one probe: 0 healthy, 1 not (refused, timed out, any status but 200, or variables the server refuses). */
export async function healthcheck(vars: Record<string, string | undefined> = process.env): Promise<number> {
	let url: string
	try {
		url = probeUrl(vars)
	} catch (e) {
		console.error((e as Error).message)
		return 1
	}
	try {
		// Over HTTPS the certificate names the server's public host, not the loopback address probed: what is checked
		// here is that this machine's server answers, so it is not verified.
		const res = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), tls: { rejectUnauthorized: false } })
		const body = await res.text()
		if (res.status === 200) return 0
		console.error(`${url}: ${res.status} ${body.slice(0, 500)}`)
	} catch (e) {
		console.error(`${url}: ${e instanceof Error ? e.message : String(e)}`)
	}
	return 1
}
