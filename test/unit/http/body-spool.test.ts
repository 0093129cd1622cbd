import { afterAll, afterEach, beforeEach, describe, expect, it, spyOn } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GatewayError } from '../../../src/core/errors'
import { bodyBlob, releaseSpool, SPOOL_MIN_BYTES, spoolDir, sweepSpool } from '../../../src/http/body-spool'

const realTmp = process.env.TMPDIR
let base: string
beforeEach(() => {
	base = mkdtempSync(join(tmpdir(), 'sb-spool-test-'))
	process.env.TMPDIR = base
})
afterEach(() => {
	if (realTmp === undefined) delete process.env.TMPDIR
	else process.env.TMPDIR = realTmp
	rmSync(base, { recursive: true, force: true })
})
afterAll(() => {
	if (realTmp !== undefined) process.env.TMPDIR = realTmp
})

/** A body of `bytes` with its length declared, as a server's request has it (a Request made here has no such header). */
const upload = (bytes: number) => new Request('http://gw/v1/audio/transcriptions', { method: 'POST', headers: { 'content-length': String(bytes) }, body: new Uint8Array(bytes).fill(7) })

describe('bodyBlob', () => {
	it('should read a body under 1 MiB in memory and spool a larger one to a file of its own, removed on release', async () => {
		const small = await bodyBlob(upload(SPOOL_MIN_BYTES - 1))
		expect(small.size).toBe(SPOOL_MIN_BYTES - 1)
		// Not even the directory is made for it.
		expect(existsSync(spoolDir())).toBe(false)

		const request = upload(SPOOL_MIN_BYTES)
		const large = await bodyBlob(request)
		const files = readdirSync(spoolDir())
		expect(files).toHaveLength(1)
		expect(files[0]!.startsWith(`${process.pid}-`)).toBe(true)
		expect(large.size).toBe(SPOOL_MIN_BYTES)
		expect((await large.bytes()).every((b) => b === 7)).toBe(true)
		releaseSpool(request)
		for (let i = 0; i < 50 && readdirSync(spoolDir()).length > 0; i++) await Bun.sleep(10)
		expect(readdirSync(spoolDir())).toEqual([])
	})

	it('should keep bodies in memory when the directory is not closed to other users, or is a link', async () => {
		mkdirSync(spoolDir(), { mode: 0o700 })
		chmodSync(spoolDir(), 0o777)
		const open = await bodyBlob(upload(2 * SPOOL_MIN_BYTES))
		expect(open.size).toBe(2 * SPOOL_MIN_BYTES)
		expect(readdirSync(spoolDir())).toEqual([])

		rmSync(spoolDir(), { recursive: true })
		const elsewhere = join(base, 'elsewhere')
		mkdirSync(elsewhere, { mode: 0o700 })
		symlinkSync(elsewhere, spoolDir())
		const linked = await bodyBlob(upload(2 * SPOOL_MIN_BYTES))
		expect(linked.size).toBe(2 * SPOOL_MIN_BYTES)
		expect(readdirSync(elsewhere)).toEqual([])
	})

	it('should answer 503 upload_spool_failed when the file cannot be written', async () => {
		mkdirSync(spoolDir(), { mode: 0o700 })
		// The file's name taken by a directory: its open fails as a full disk's write would (root passes permissions).
		const uuid = spyOn(crypto, 'randomUUID').mockReturnValue('0-0-0-0-0')
		try {
			mkdirSync(join(spoolDir(), `${process.pid}-0-0-0-0-0`))
			const request = upload(SPOOL_MIN_BYTES)
			const e = await bodyBlob(request).catch((x: unknown) => x)
			expect(e).toBeInstanceOf(GatewayError)
			expect(e).toMatchObject({ status: 503, code: 'upload_spool_failed' })
		} finally {
			uuid.mockRestore()
		}
	})

	it('should make the directory again when a cleaner removed it', async () => {
		await bodyBlob(upload(SPOOL_MIN_BYTES))
		rmSync(spoolDir(), { recursive: true })
		const again = await bodyBlob(upload(SPOOL_MIN_BYTES))
		expect(again.size).toBe(SPOOL_MIN_BYTES)
		expect(readdirSync(spoolDir())).toHaveLength(1)
	})
})

describe('sweepSpool', () => {
	it("should remove what processes no longer running left, and this process's own id, and keep a running one's", async () => {
		const ended = Bun.spawn(['true'])
		await ended.exited
		const running = Bun.spawn(['sleep', '30'])
		try {
			mkdirSync(spoolDir(), { mode: 0o700 })
			for (const name of [`${ended.pid}-a`, `${running.pid}-b`, `${process.pid}-c`, 'stray']) writeFileSync(join(spoolDir(), name), 'x')
			await sweepSpool()
			expect(readdirSync(spoolDir())).toEqual([`${running.pid}-b`])
		} finally {
			running.kill()
		}
	})
})
