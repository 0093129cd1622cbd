/** Input checks shared by the media endpoints, with messages that say what is expected. */
import { badRequest } from '../core/errors'

/** Sides a `WxH` size may have, in pixels. */
export const MIN_SIDE = 64
export const MAX_SIDE = 8192

/**
 * Throws a 400 unless `size` is absent, `auto`, or `WxH` with both sides within 64–8192 pixels.
 * @example checkSize('1024x1024') // ok; checkSize('big') // throws
 */
export function checkSize(size: string | undefined): void {
	if (size === undefined || size === 'auto') return
	const m = /^(\d{1,5})x(\d{1,5})$/.exec(size)
	const ok = m && [m[1], m[2]].every((s) => Number(s) >= MIN_SIDE && Number(s) <= MAX_SIDE)
	if (!ok) throw badRequest(`Invalid 'size': "${size}". Expected WxH in pixels (e.g. 1024x1024), each side ${MIN_SIDE}–${MAX_SIDE}, or "auto".`, 'size')
}
