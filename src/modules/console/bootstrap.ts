/**
 * First start: when no console user exists, create the administrator (username `admin`, or ADMIN_USERNAME) in an
 * account named "admin". The password is ADMIN_PASSWORD, else a random one printed once to stderr: it is never
 * stored in clear or written to the structured log (whose redaction would hide it anyway).
 * @module
 */
import { Value } from '@sinclair/typebox/value'
import { GatewayError } from '../../core/errors'
import { randomString } from '../../lib/ids'
import type { Services } from '../../services'
import { Credentials, Username } from './schemas'
import { countUsers, createUser, normaliseUsername } from './users-service'

export type BootstrapResult = { created: false } | { created: true; username: string; /** Only when generated. */ password?: string }

/**
 * Creates the first administrator when there is no user yet; safe to call at every start and from several
 * instances at once (the unique username decides who wins).
 * @example await bootstrapAdmin(svc) // { created: true, username: 'admin', password: 'q3…' } on a fresh database
 */
export async function bootstrapAdmin(svc: Services, print: (line: string) => void = (l) => console.warn(l)): Promise<BootstrapResult> {
	if ((await countUsers(svc.db)) > 0) return { created: false }
	const username = normaliseUsername(svc.env.adminUsername)
	const given = svc.env.adminPassword
	// Refused before the user exists: a name or password longer than sign-in takes would lock the console for good,
	// and a name the users API would refuse (a space, `!`) is refused here as there.
	if (!Value.Check(Username, username)) throw new Error(`ADMIN_USERNAME must be 3 to 64 letters, digits or . _ @ - (as every console username), got "${svc.env.adminUsername}"`)
	const maxPassword = Credentials.properties.password.maxLength!
	if (given && given.length > maxPassword) throw new Error(`ADMIN_PASSWORD must be at most ${maxPassword} characters (what the console's sign-in takes), got ${given.length}`)
	const password = given || randomString(20)
	try {
		await createUser(svc.db, { username, password, accountName: 'admin', isAdmin: true })
	} catch (e) {
		// Another instance created it between our count and insert.
		if (e instanceof GatewayError && e.code === 'username_taken') return { created: false }
		throw e
	}
	if (given) {
		svc.log.info('console administrator created from ADMIN_PASSWORD', { username })
		if (given.length < 8) svc.log.warn('ADMIN_PASSWORD is shorter than 8 characters; change it in the console')
		return { created: true, username }
	}
	print(
		[
			'',
			'================================================================',
			` Switchboard console: administrator "${username}" created.`,
			` One-time password: ${password}`,
			' Sign in at /console and change it (it is not shown again).',
			'================================================================',
			'',
		].join('\n'),
	)
	svc.log.warn('console administrator created with a generated password (printed once above)', { username })
	return { created: true, username, password }
}
