import { describe, expect, it } from 'bun:test'
import { GatewayError, notFound } from '../../../src/core/errors'
import { errorResponse, shapeForPath } from '../../../src/http/error-shapes'
import { mjActionModel, mjInsightFaceModel } from '../../../src/modules/mj/actions'
import { isMjPoll } from '../../../src/modules/mj'
import { isSunoPoll } from '../../../src/modules/suno'
import { encodeMjError, encodeSunoError, mjReturnCode } from '../../../src/passthrough/task-errors'

describe('shapeForPath', () => {
	it('should give the task services their own shapes and leave look-alike paths to OpenAI', () => {
		expect(shapeForPath('/mj/submit/imagine')).toBe('midjourney')
		expect(shapeForPath('/mj/insight-face/swap')).toBe('midjourney')
		expect(shapeForPath('/suno/fetch/abc')).toBe('suno')
		expect(shapeForPath('/mjx/submit')).toBe('openai')
		expect(shapeForPath('/sunoish')).toBe('openai')
		expect(shapeForPath('/v1/video/generations')).toBe('openai')
	})
})

describe('encodeMjError', () => {
	it('should map statuses to midjourney-proxy return codes', () => {
		expect([400, 401, 402, 403, 404, 413, 429, 500, 502, 503, 504].map(mjReturnCode)).toEqual([4, 4, 4, 4, 3, 4, 23, 9, 9, 9, 9])
	})

	it('should keep the status and retry-after, and carry the gateway code in properties', () => {
		const out = encodeMjError(new GatewayError('rate_limit', 'Request rate limit reached: 2 requests per minute', { code: 'rate_limit_exceeded', retryAfter: 12.2 }))
		expect(out).toEqual({
			status: 429,
			body: { code: 23, description: 'Request rate limit reached: 2 requests per minute', result: null, properties: { error_code: 'rate_limit_exceeded' } },
			headers: { 'retry-after': '13' },
		})
		// No code of its own: the kind's default, as OpenAI's shape would say.
		expect(encodeMjError(new GatewayError('insufficient_quota', 'Insufficient balance')).body).toMatchObject({ code: 4, properties: { error_code: 'insufficient_quota' } })
		expect(encodeMjError(new GatewayError('upstream', 'boom')).body).toMatchObject({ code: 9, properties: { error_code: 'server_error' } })
	})
})

describe('encodeSunoError', () => {
	it('should answer new-api\'s task error shape with the status unchanged', () => {
		expect(encodeSunoError(notFound('No Suno task "x"', 'task_not_found'))).toEqual({ status: 404, body: { code: 'task_not_found', message: 'No Suno task "x"', data: null } })
	})

	it('should be what errorResponse renders on /suno paths', async () => {
		const res = errorResponse(new GatewayError('permission', 'no', { code: 'model_not_allowed' }), shapeForPath('/suno/fetch'), 'req_1')
		expect(res.status).toBe(403)
		expect(res.headers.get('x-request-id')).toBe('req_1')
		expect(await res.json()).toEqual({ code: 'model_not_allowed', message: 'no', data: null })
	})
})

describe('Midjourney task models and polls', () => {
	it('should price the InsightFace swap as mj_swap_face and leave uploads untaxed', () => {
		expect(mjInsightFaceModel('swap')).toBe('mj_swap_face')
		expect(mjInsightFaceModel('other')).toBe('mj_action')
		expect(mjActionModel('upload-discord-images', {})).toBeUndefined()
		expect(mjActionModel('video', {})).toBe('mj_action')
	})

	it('should count task reads as polls and nothing else', () => {
		expect(isMjPoll('GET', '/mj/task/1/fetch')).toBe(true)
		expect(isMjPoll('POST', '/mj/task/list-by-condition')).toBe(true)
		expect(isMjPoll('POST', '/mj/submit/imagine')).toBe(false)
		expect(isMjPoll('POST', '/mj/insight-face/swap')).toBe(false)
		expect(isSunoPoll('GET', '/suno/fetch/abc')).toBe(true)
		expect(isSunoPoll('POST', '/suno/fetch')).toBe(true)
		expect(isSunoPoll('POST', '/suno/fetcher')).toBe(false)
		expect(isSunoPoll('POST', '/suno/submit/music')).toBe(false)
	})
})
