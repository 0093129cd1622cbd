import { describe, expect, it } from 'bun:test'
import { readCookie, sessionCookie } from '../../../src/modules/console/cookies'
import { servedBy, servedThrough } from '../../../src/modules/console/endpoints'
import { esc } from '../../../src/modules/console/html'
import { createLoginLimiter, limiterKey } from '../../../src/modules/console/login-limiter'

describe('session cookie', () => {
	it('should read one cookie among several', () => {
		expect(readCookie('a=1; sb_session=xyz; b=2', 'sb_session')).toBe('xyz')
		expect(readCookie('a=1', 'sb_session')).toBeUndefined()
		expect(readCookie(null, 'sb_session')).toBeUndefined()
	})

	it('should set HttpOnly, SameSite=Strict and Path=/, and Secure only over https', () => {
		expect(sessionCookie('abc', 3600, false)).toBe('sb_session=abc; Path=/; Max-Age=3600; HttpOnly; SameSite=Strict')
		expect(sessionCookie('abc', 3600, true)).toEndWith('; Secure')
	})
})

describe('login limiter', () => {
	it('should block after five failures for one key until the window passes', () => {
		let now = 0
		const l = createLoginLimiter({ maxFailures: 5, windowMs: 60_000, now: () => now })
		const k = limiterKey(' Alice ', '1.2.3.4')
		expect(k).toBe('alice|1.2.3.4')
		for (let i = 0; i < 5; i++) {
			expect(l.retryAfter(k)).toBe(0)
			l.fail(k)
		}
		expect(l.retryAfter(k)).toBe(60)
		expect(l.retryAfter(limiterKey('alice', '5.6.7.8'))).toBe(0)
		now = 30_000
		expect(l.retryAfter(k)).toBe(30)
		now = 60_000
		expect(l.retryAfter(k)).toBe(0)
	})

	it('should forget failures after a success', () => {
		const l = createLoginLimiter({ maxFailures: 2 })
		l.fail('k')
		l.succeed('k')
		l.fail('k')
		expect(l.retryAfter('k')).toBe(0)
	})
})

describe('served endpoints', () => {
	it('should give chat models every chat protocol, whatever the vendor', () => {
		for (const type of ['openai', 'anthropic', 'gemini'] as const) {
			const s = servedBy('some-chat-model', [type])
			expect(s.endpoints).toContain('POST /v1/chat/completions')
			expect(s.endpoints).toContain('POST /v1/messages')
			expect(s.protocols).toContain('Gemini')
		}
	})

	it('should tell OpenAI-style families apart by name and task channels by type', () => {
		// Gemini's embed methods take the embedding models of OpenAI, Azure, Gemini and Vertex channels, not Bedrock's.
		expect(servedBy('text-embedding-3-small', ['openai']).endpoints).toEqual(['POST /v1/embeddings', 'POST /v1beta/models/{model}:embedContent', 'POST /v1beta/models/{model}:batchEmbedContents'])
		expect(servedBy('amazon.titan-embed-text-v2:0', ['bedrock'])).toEqual({ endpoints: ['POST /v1/embeddings'], protocols: ['OpenAI Embeddings'] })
		expect(servedBy('tts-1', ['openai']).endpoints).toEqual(['POST /v1/audio/speech'])
		expect(servedBy('whisper-1', ['openai']).endpoints).toEqual(['POST /v1/audio/transcriptions', 'POST /v1/audio/translations'])
		expect(servedBy('gpt-4o-transcribe', ['openai']).endpoints).toEqual(['POST /v1/audio/transcriptions'])
		// OpenAI's edits take dall-e-2 and the GPT image models; variations dall-e-2 alone.
		expect(servedBy('dall-e-3', ['openai']).endpoints).toEqual(['POST /v1/images/generations'])
		expect(servedBy('gpt-image-1', ['openai']).endpoints).toEqual(['POST /v1/images/generations', 'POST /v1/images/edits'])
		expect(servedBy('dall-e-2', ['openai']).endpoints).toEqual(['POST /v1/images/generations', 'POST /v1/images/edits', 'POST /v1/images/variations'])
		expect(servedBy('gpt-3.5-turbo-instruct', ['openai']).endpoints).toEqual(['POST /v1/completions'])
		expect(servedBy('x', ['video']).endpoints).toEqual(['POST /v1/videos', 'POST /v1/video/generations'])
		expect(servedBy('claude-embed-like', ['anthropic']).endpoints).toContain('POST /v1/messages')
		expect(servedBy('x', ['rerank']).endpoints).toEqual(['POST /v1/rerank'])
		// A reranker an OpenAI-compatible vendor serves (Jina, SiliconFlow): /v1/rerank, not chat.
		expect(servedBy('jina-reranker-v2-base-multilingual', ['openai'])).toEqual({ endpoints: ['POST /v1/rerank'], protocols: ['Rerank (Cohere/Jina)'] })
		expect(servedBy('BAAI/bge-reranker-v2-m3', ['openai']).endpoints).toEqual(['POST /v1/rerank'])
		expect(servedBy('x', ['openai', 'rerank']).endpoints).toContain('POST /v1/rerank')
	})

	it('should tell a mapped model by the name its channel sends, else by its own', () => {
		const embed = ['POST /v1/embeddings', 'POST /v1beta/models/{model}:embedContent', 'POST /v1beta/models/{model}:batchEmbedContents']
		// An alias of an embedding model is one, whatever it is called here.
		expect(servedThrough('house-vectors', [{ type: 'openai', modelMap: { 'house-vectors': 'text-embedding-3-small' } }]).endpoints).toEqual(embed)
		// An Azure deployment may be called anything: the model's own name says the family.
		expect(servedThrough('text-embedding-3-small', [{ type: 'azure', modelMap: { 'text-embedding-3-small': 'emb-prod' } }]).endpoints).toEqual(embed)
		expect(servedThrough('gpt-4o-mini', [{ type: 'azure', modelMap: { 'gpt-4o-mini': 'prod-chat' } }]).endpoints).toContain('POST /v1/messages')
		// Unmapped, and over several channels: the union.
		expect(servedThrough('whisper-1', [{ type: 'openai', modelMap: {} }]).endpoints).toEqual(['POST /v1/audio/transcriptions', 'POST /v1/audio/translations'])
		const both = servedThrough('mixed', [{ type: 'anthropic', modelMap: { mixed: 'claude-sonnet-5' } }, { type: 'rerank', modelMap: {} }]).endpoints
		expect(both).toContain('POST /v1/messages')
		expect(both).toContain('POST /v1/rerank')
	})

	it('should list the routes of realtime models and of Imagen and Veo on Gemini channels', () => {
		// Realtime models answer over the WebSocket only, on OpenAI channels (GET /v1/realtime?model=…).
		for (const m of ['gpt-realtime', 'gpt-realtime-mini-2025-10-06', 'gpt-4o-realtime-preview', 'gpt-4o-mini-realtime-preview'])
			expect(servedBy(m, ['openai'])).toEqual({ endpoints: ['GET /v1/realtime?model={model}'], protocols: ['OpenAI Realtime'] })
		// On Gemini channels Imagen is served by :predict and by OpenAI's image generations (converted to :predict) …
		expect(servedBy('imagen-4.0-generate-001', ['gemini'])).toEqual({ endpoints: ['POST /v1beta/models/{model}:predict', 'POST /v1/images/generations'], protocols: ['Gemini Imagen', 'OpenAI Images'] })
		// … Gemini's image models by the chat protocols and OpenAI's image generations …
		expect(servedBy('gemini-2.5-flash-image', ['gemini']).endpoints).toEqual([
			'POST /v1/chat/completions',
			'POST /v1/responses',
			'POST /v1/messages',
			'POST /v1beta/models/{model}:generateContent',
			'POST /v1/images/generations',
		])
		// … and Veo by :predictLongRunning, its operation polled by name.
		expect(servedBy('veo-3.0-generate-001', ['gemini'])).toEqual({
			endpoints: ['POST /v1beta/models/{model}:predictLongRunning', 'GET /v1beta/models/{model}/operations/{id}'],
			protocols: ['Gemini Veo'],
		})
		// An Imagen model behind an OpenAI-compatible channel keeps the OpenAI images route.
		expect(servedBy('imagen-4.0-generate-001', ['openai']).endpoints).toEqual(['POST /v1/images/generations'])
		expect(servedBy('gemini-2.5-flash', ['gemini']).endpoints).toContain('POST /v1beta/models/{model}:generateContent')
	})
})

describe('html escaping', () => {
	it('should escape the five HTML-significant characters', () => {
		expect(esc(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;')
	})
})
