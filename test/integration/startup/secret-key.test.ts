import { afterAll, describe, expect, it } from 'bun:test'
import { loadEnv } from '../../../src/config/env'
import { silentLogger } from '../../../src/lib/log'
import { createToken, revealToken } from '../../../src/modules/admin/tokens/service'
import { createServices } from '../../../src/services'
import { createTestDb, type TestDb } from '../../helpers/db'

const KEY_A = 'first-secret-key-0123456789'
const KEY_B = 'second-secret-key-0123456789'
const open = (db: TestDb, secret: string) => createServices(loadEnv({ SECRET_KEY: secret, LOG_LEVEL: 'error' }), { db: db.db, log: silentLogger })

describe('SECRET_KEY', () => {
	let tdb: TestDb
	afterAll(() => tdb?.drop())

	it('should refuse to start with a key that cannot open the stored API keys, saying so', async () => {
		tdb = await createTestDb()
		const first = await open(tdb, KEY_A)
		const [account] = await tdb.db.sql.query<{ id: number }>(`INSERT INTO accounts (name, balance) VALUES ('a', 0) RETURNING id`)
		const token = await createToken(first, account!.id, { name: 'k' })
		expect(await revealToken(first, token.row)).toBe(token.key)
		// The services leave a database they were given open.
		await first.close()

		// The same key starts again; another one is refused before it could fail reveals one by one.
		const again = await open(tdb, KEY_A)
		await again.close()
		await expect(open(tdb, KEY_B)).rejects.toThrow('cannot be decrypted with this SECRET_KEY')
	})
})
