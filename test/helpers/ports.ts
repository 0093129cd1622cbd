/**
 * A free port on 127.0.0.1 for a server process a test starts: one below the kernel's ephemeral range, checked free
 * by listening on it, then released for the process to take. A port the OS handed out (port 0) could be handed out
 * again in the moment between its release and the process's bind, to a server another test file started with port 0
 * beside this one (`--parallel`): a probe then reached that server, and a process that had failed seemed healthy. A
 * random number in the ephemeral range collided with outgoing connections' ports.
 */
export function freePort(): number {
	for (let tries = 0; tries < 50; tries++) {
		const port = LOW + Math.floor(Math.random() * (HIGH - LOW))
		try {
			const s = Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } })
			s.stop(true)
			return port
		} catch {
			// taken: another
		}
	}
	throw new Error('no free port below the ephemeral range')
}

/** Below Linux's default ephemeral range (32768–60999), which port 0 and outgoing connections draw from. */
const LOW = 20_000
const HIGH = 32_768
