/**
 * A free port on 127.0.0.1 for a server process a test starts: asked from the OS (port 0), then released for the
 * process to take. A random number instead collided with ports in use while other tests ran beside it.
 */
export function freePort(): number {
	const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
	const port = s.port
	s.stop(true)
	return port
}
