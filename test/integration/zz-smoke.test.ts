import { expect, test } from 'bun:test'
import OpenAI from 'openai'
import Anthropic from '@anthropic-ai/sdk'
import { startTestApp } from '../helpers/app'
import { startOpenAIMock, startAnthropicMock, startGeminiMock } from '../mocks'

test('smoke', async () => {
	const oa = await startOpenAIMock({ apiKey: 'up-oa' })
	const an = await startAnthropicMock({ apiKey: 'up-an' })
	const ge = await startGeminiMock({ apiKey: 'up-ge' })
	const app = await startTestApp({ config: { channels: [
		{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-4o-mini'] },
		{ name: 'an', type: 'anthropic', base_url: an.url, api_key: 'up-an', models: ['claude-x'] },
		{ name: 'ge', type: 'gemini', base_url: ge.url, api_key: 'up-ge', models: ['gemini-x'] },
	], models: [ { name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }, { name: 'claude-x', input_per_mtok: 3, output_per_mtok: 15 }, { name: 'gemini-x', input_per_mtok: 1, output_per_mtok: 4 } ] } })
	const { key, accountId } = await app.account(10)
	const openai = new OpenAI({ apiKey: key, baseURL: app.url + '/v1' })
	const anth = new Anthropic({ apiKey: key, baseURL: app.url })
	for (const model of ['gpt-4o-mini', 'claude-x', 'gemini-x']) {
		const r = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi there' }] })
		console.log(model, 'oa', r.choices[0].message.content, r.usage)
		const s = await openai.chat.completions.create({ model, stream: true, stream_options: {include_usage: true}, messages: [{ role: 'user', content: 'hi there' }] })
		let txt = ''; for await (const c of s) txt += c.choices[0]?.delta?.content ?? ''
		console.log(model, 'oa-stream', txt)
		const m = await anth.messages.create({ model, max_tokens: 100, messages: [{ role: 'user', content: 'hello claude' }] })
		console.log(model, 'an', JSON.stringify(m.content), m.usage)
		const ms = anth.messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'hello claude' }] })
		const fm = await ms.finalMessage()
		console.log(model, 'an-stream', JSON.stringify(fm.content), fm.usage)
	}
	console.log('balance', await app.balance(accountId))
	console.log((await app.admin('/api/usage')).body.data.map((u: any) => [u.model, u.endpoint, u.input_tokens, u.output_tokens, u.cost, u.estimated, u.end_reason].join(' ')))
	await app.close(); await oa.stop(); await an.stop(); await ge.stop()
}, 60000)
