import { afterEach, describe, expect, it, spyOn } from 'bun:test'
import { createIdleGc } from '../../../src/lib/idle-gc'

describe('idle collector', () => {
	const gc = spyOn(Bun, 'gc')
	afterEach(() => gc.mockClear())

	it('should collect once after a burst, in the first quiet interval with nothing busy', async () => {
		let busy = true
		const idle = createIdleGc({ minRequests: 5, quietMs: 20, busy: () => busy })
		try {
			for (let i = 0; i < 10; i++) idle.note()
			await Bun.sleep(70)
			expect(gc).not.toHaveBeenCalled() // a stream is still open
			busy = false
			await Bun.sleep(70)
			expect(gc).toHaveBeenCalledTimes(1)
			await Bun.sleep(70)
			expect(gc).toHaveBeenCalledTimes(1) // once per burst
		} finally {
			idle.stop()
		}
	})

	it('should not collect while requests keep coming, nor after fewer than the minimum', async () => {
		const idle = createIdleGc({ minRequests: 20, quietMs: 60 })
		try {
			const until = Date.now() + 200
			while (Date.now() < until) {
				idle.note()
				await Bun.sleep(1)
			}
			expect(gc).not.toHaveBeenCalled()
			await Bun.sleep(200)
			expect(gc).toHaveBeenCalledTimes(1)
			for (let i = 0; i < 10; i++) idle.note()
			await Bun.sleep(200)
			expect(gc).toHaveBeenCalledTimes(1)
		} finally {
			idle.stop()
		}
	})
})
