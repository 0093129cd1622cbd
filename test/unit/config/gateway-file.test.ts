import { describe, expect, it } from 'bun:test'
import { loadGatewayFile, parseGatewayConfig } from '../../../src/config/gateway-file'

const channel = { name: 'openai-main', type: 'openai', base_url: 'https://x/v1', api_key: 'k', models: ['gpt-4o-mini'] }

describe('parseGatewayConfig', () => {
	it('should accept the documented example', () => {
		const cfg = parseGatewayConfig({
			channels: [{ ...channel, models: [...channel.models, 'public-name'], priority: 0, weight: 1, model_map: { 'public-name': 'upstream-name' } }],
			models: [{ name: 'gpt-4o-mini', input_per_mtok: 0.15, output_per_mtok: 0.6, max_output_tokens: 16384 }, { name: 'dall-e-3', per_request: 0.04 }],
		})
		expect(cfg.channels[0]!.model_map).toEqual({ 'public-name': 'upstream-name' })
		expect(cfg.models).toHaveLength(2)
	})
	it("should take a model's limits as whole token counts, naming a malformed one", () => {
		const cfg = parseGatewayConfig({ models: [{ name: 'm', input_per_mtok: 1, max_output_tokens: 64000, context_window: 200000 }] })
		expect(cfg.models[0]).toMatchObject({ max_output_tokens: 64000, context_window: 200000 })
		expect(() => parseGatewayConfig({ models: [{ name: 'm', context_window: 1.5 }] }, 'gw.json')).toThrow(/^gw\.json: models\[0\] \("m"\): field "context_window"/)
		expect(() => parseGatewayConfig({ models: [{ name: 'm', context_window: 0 }] }, 'gw.json')).toThrow(/field "context_window"/)
	})
	it('should name the file, the entry and the field of an unknown channel type', () => {
		expect(() => parseGatewayConfig({ channels: [{ ...channel, type: 'nope' }] }, 'gw.json')).toThrow(/gw\.json: channels\[0\] \("openai-main"\): field "type"/)
	})
	it('should name a missing field', () => {
		const { base_url: _, ...noUrl } = channel
		expect(() => parseGatewayConfig({ channels: [noUrl] }, 'gw.json')).toThrow(/channels\[0\] \("openai-main"\): field "base_url"/)
	})
	it('should reject duplicate names', () => {
		expect(() => parseGatewayConfig({ channels: [channel, channel] }, 'gw.json')).toThrow(/duplicate name "openai-main"/)
	})
	it('should reject unknown price fields and over-precise prices', () => {
		expect(() => parseGatewayConfig({ models: [{ name: 'm', cost: 1 }] }, 'gw.json')).toThrow(/models\[0\] \("m"\): unknown field "cost"/)
		expect(() => parseGatewayConfig({ models: [{ name: 'm', input_per_mtok: 0.0000001 }] }, 'gw.json')).toThrow(/field "input_per_mtok"/)
	})
	it('should refuse a misspelt token price, naming file, entry and field, rather than bill it at $0', () => {
		const typo = { models: [{ name: 'gpt-4o-mini', input_per_mtok: 0.15, ouput_per_mtok: 0.6 }] }
		expect(() => parseGatewayConfig(typo, 'gw.json')).toThrow(/^gw\.json: models\[0\] \("gpt-4o-mini"\): unknown field "ouput_per_mtok": did you mean "output_per_mtok"\? \(allowed: name, input_per_mtok, output_per_mtok, .*per_image/)
		expect(() => parseGatewayConfig({ models: [{ name: 'm', reasoning_per_mtok: 1 }] }, 'gw.json')).toThrow(/unknown field "reasoning_per_mtok"/)
	})
	it('should accept only the unit prices something charges', () => {
		for (const k of ['per_reqest', 'per_imgae', 'per_call', 'per_image_1024x1024_hdd', 'per_image_big', 'per_second_hd', 'per_minutes'])
			expect(() => parseGatewayConfig({ models: [{ name: 'm', [k]: 1 }] }, 'gw.json')).toThrow(`gw.json: models[0] ("m"): unknown field "${k}"`)
		const units = { per_image: 0.04, per_image_1024x1024: 0.04, per_image_hd: 0.08, per_image_1792x1024_hd: 0.12, per_minute: 0.006, per_second: 0.0001, per_second_1280x720: 0.1, per_mchar: 15, per_char: 0.000015, per_search_unit: 0.002 }
		expect(parseGatewayConfig({ models: [{ name: 'm', per_request: 0.01, ...units }] }).models[0]).toMatchObject(units)
	})
	it('should refuse an unknown channel field and list the channel types', () => {
		expect(() => parseGatewayConfig({ channels: [{ ...channel, prioirty: 3 }] }, 'gw.json')).toThrow(/^gw\.json: channels\[0\] \("openai-main"\): unknown field "prioirty": did you mean "priority"\? \(allowed: name, type, .*priority/)
		expect(() => parseGatewayConfig({ channels: [{ ...channel, type: 'opnai' }] }, 'gw.json')).toThrow(/field "type" must be one of openai, anthropic, gemini, .*not "opnai"/)
	})
	it('should refuse a misspelt channel setting, naming file, entry and field, rather than store it and ignore it', () => {
		const bad = (settings: unknown) => () => parseGatewayConfig({ channels: [{ ...channel, settings }] }, 'gw.json')
		expect(bad({ timeoutz: { first_byte_ms: 100 } })).toThrow('gw.json: channels[0] ("openai-main"): unknown field "settings.timeoutz": did you mean "timeouts"? (allowed: timeouts, headers, structured_outputs, auto_cache, tool_call_ids, prefix_completion, reasoning_effort, responses_api, project, region, base_models, control_plane_url, guardrail_identifier, guardrail_version, guardrail_trace, guardrail_stream_mode, speech_sse, api_version, authority_host, token_scope, client_id, extra_task_paths, interactions_api)')
		expect(bad({ timeouts: { first_byte_ms: 100, idle: 5 } })).toThrow('gw.json: channels[0] ("openai-main"): unknown field "settings.timeouts.idle" (allowed: first_byte_ms, answer_ms, idle_ms)')
		expect(bad({ headers: { 'http referer': 'x' } })).toThrow(/channels\[0\] \("openai-main"\): field "settings\.headers\.http referer": not a valid name/)
	})
	it('should take extra task paths only as a method and a plain path outside the billed and task routes', () => {
		const mj = { name: 'mj', type: 'imgsvc', base_url: 'http://mj.internal:8080', api_key: 'secret', models: ['mj_*'] }
		const extra_task_paths = ['GET /mj/notify/status', 'POST /mj/account/list', 'DELETE /suno/clips/a-1.b_2', 'GET /mj/submitted']
		expect(parseGatewayConfig({ channels: [{ ...mj, settings: { extra_task_paths } }] }).channels[0]!.settings).toEqual({ extra_task_paths })
		for (const entry of [
			'/mj/notify/status',
			'get /mj/notify/status',
			'HEAD /mj/notify/status',
			'GET /mj/Admin/current',
			'GET /mj/notify/',
			'GET /mj//notify',
			'GET /mj/../admin',
			'GET /mj/./admin',
			'GET /mj/a%2Fb',
			'GET /mj',
			'GET /v1/models',
			'GET /mjx/notify',
			'POST /mj/submit/something-new',
			'POST /mj/submit',
			'POST /mj/insight-face/video-swap',
			'GET /mj/task/1712/image-seed',
			'POST /suno/submit/video',
			'GET /suno/fetch',
			'GET /suno/fetch/abc',
		])
			expect(() => parseGatewayConfig({ channels: [{ ...mj, settings: { extra_task_paths: [entry] } }] }, 'gw.json')).toThrow('field "settings.extra_task_paths.0"')
	})
	it('should refuse a channel setting of the wrong type, naming the field', () => {
		const bad = (settings: unknown) => () => parseGatewayConfig({ channels: [{ ...channel, settings }] }, 'gw.json')
		expect(bad({ timeouts: { first_byte_ms: 'abc' } })).toThrow(/^gw\.json: channels\[0\] \("openai-main"\): field "settings\.timeouts\.first_byte_ms" Expected integer/)
		expect(bad({ timeouts: { idle_ms: 0 } })).toThrow(/field "settings\.timeouts\.idle_ms"/)
		expect(bad({ headers: { 'x-title': 1 } })).toThrow(/field "settings\.headers\.x-title" Expected string/)
		expect(bad({ reasoning_effort: 'none' })).toThrow(/field "settings\.reasoning_effort" Expected boolean/)
		expect(bad({ responses_api: 'false' })).toThrow(/field "settings\.responses_api" Expected boolean/)
		expect(bad([])).toThrow(/field "settings"/)
	})
	it('should accept every documented channel setting', () => {
		const settings = { timeouts: { first_byte_ms: 120000, idle_ms: 300000 }, headers: { 'HTTP-Referer': 'https://example.com' }, responses_api: false }
		expect(parseGatewayConfig({ channels: [{ ...channel, settings }] }).channels[0]!.settings).toEqual(settings)
	})
	it("should take a bedrock channel's region only as an AWS region name", () => {
		const bedrock = { ...channel, type: 'bedrock', base_url: 'https://vpce.example.com' }
		for (const region of ['us-east-1', 'us-gov-west-1', 'ap-southeast-2', 'cn-north-1'])
			expect(parseGatewayConfig({ channels: [{ ...bedrock, settings: { region } }] }).channels[0]!.settings).toEqual({ region })
		for (const region of ['US-EAST-1', 'us-east', 'us_east_1', ''])
			expect(() => parseGatewayConfig({ channels: [{ ...bedrock, settings: { region } }] }, 'gw.json')).toThrow('settings.region')
	})
	it("should take a bedrock channel's guardrail as an id or ARN with its version, refusing one without the other", () => {
		const bedrock = { ...channel, type: 'bedrock', base_url: 'https://bedrock-runtime.us-east-1.amazonaws.com' }
		const parse = (settings: unknown) => parseGatewayConfig({ channels: [{ ...bedrock, settings }] }, 'gw.json')
		for (const settings of [
			{ guardrail_identifier: 'gr0abc123xyz', guardrail_version: '1' },
			{ guardrail_identifier: 'arn:aws:bedrock:us-east-1:111122223333:guardrail/gr0abc123xyz', guardrail_version: 'DRAFT', guardrail_trace: 'enabled_full', guardrail_stream_mode: 'async' },
		] as const)
			expect(parse(settings).channels[0]!.settings).toEqual(settings)
		expect(() => parse({ guardrail_identifier: 'gr0abc123xyz' })).toThrow(
			'gw.json: channels[0] ("openai-main"): field "settings.guardrail_version": guardrail_identifier needs guardrail_version (a number such as "1", or "DRAFT"): Bedrock refuses a guardrail without its version',
		)
		expect(() => parse({ guardrail_version: '1' })).toThrow(`field "settings.guardrail_identifier": guardrail_version needs guardrail_identifier (the guardrail's id or ARN)`)
		expect(() => parse({ guardrail_trace: 'enabled' })).toThrow('field "settings.guardrail_trace": guardrail_trace applies to a guardrail: set guardrail_identifier and guardrail_version too')
		for (const [settings, field] of [
			[{ guardrail_identifier: 'GR-Upper', guardrail_version: '1' }, 'settings.guardrail_identifier'],
			[{ guardrail_identifier: 'gr1', guardrail_version: 'draft' }, 'settings.guardrail_version'],
			[{ guardrail_identifier: 'gr1', guardrail_version: '0' }, 'settings.guardrail_version'],
			[{ guardrail_identifier: 'gr1', guardrail_version: '1', guardrail_trace: 'ENABLED' }, 'settings.guardrail_trace'],
			[{ guardrail_identifier: 'gr1', guardrail_version: '1', guardrail_stream_mode: 'ASYNCHRONOUS' }, 'settings.guardrail_stream_mode'],
		] as const)
			expect(() => parse(settings)).toThrow(`field "${field}"`)
	})
	it("should name the line of a guardrail identifier given without its version in a YAML file", async () => {
		const path = `/tmp/gw-guardrail-${process.pid}.yaml`
		await Bun.write(path, `channels:\n  - name: br\n    type: bedrock\n    base_url: https://bedrock-runtime.us-east-1.amazonaws.com\n    api_key: k\n    models: [m]\n    settings:\n      guardrail_identifier: gr1\n`)
		expect(() => loadGatewayFile(path)).toThrow(`${path}: line 8, column 7: channels[0] ("br"): field "settings.guardrail_version"`)
	})
	it("should take a vertex channel's region as a Google Cloud location, and its project as a project id", () => {
		const vertex = { ...channel, type: 'vertex', base_url: 'https://aiplatform.googleapis.com' }
		for (const settings of [{ region: 'global' }, { region: 'us-east5' }, { region: 'europe-west4' }, { region: 'northamerica-northeast1' }, { region: 'us', project: 'my-project-123' }])
			expect(parseGatewayConfig({ channels: [{ ...vertex, settings }] }).channels[0]!.settings).toEqual(settings)
		for (const settings of [{ region: 'Global' }, { region: 'us-east' }, { project: 'My Project' }])
			expect(() => parseGatewayConfig({ channels: [{ ...vertex, settings }] }, 'gw.json')).toThrow('settings.')
	})
	it('should refuse a base_url that is not an http(s) URL, as the management API does', () => {
		for (const base_url of ['not a url', 'http://', 'https:// x/v1', 'ftp://host/v1', 'api.openai.com/v1'])
			expect(() => parseGatewayConfig({ channels: [{ ...channel, base_url }] }, 'gw.json')).toThrow(
				`gw.json: channels[0] ("openai-main"): field "base_url" does not fit: An http:// or https:// URL, not ${JSON.stringify(base_url)}`,
			)
		for (const base_url of ['http://127.0.0.1:8080', 'https://api.openai.com/v1', 'https://[::1]:8443/v1?x=1'])
			expect(parseGatewayConfig({ channels: [{ ...channel, base_url }] }).channels[0]!.base_url).toBe(base_url)
	})
	it('should refuse an unknown top-level field', () => {
		expect(() => parseGatewayConfig({ modles: [{ name: 'm', input_per_mtok: 1 }] }, 'gw.json')).toThrow('gw.json: unknown field "modles": did you mean "models"? (allowed: channels, models)')
	})
})

describe('loadGatewayFile', () => {
	it('should read YAML and report unparsable files by name', async () => {
		const dir = `/tmp/sb-cfg-${process.pid}`
		await Bun.write(`${dir}/gw.yaml`, 'channels:\n  - name: a\n    type: anthropic\n    base_url: https://x\n    api_key: env:K\n    models: [claude-*]\n')
		expect((await loadGatewayFile(`${dir}/gw.yaml`)).channels[0]!.type).toBe('anthropic')
		await Bun.write(`${dir}/bad.json`, '{"channels": [')
		await expect(loadGatewayFile(`${dir}/bad.json`)).rejects.toThrow(/bad\.json: cannot parse/)
		await expect(loadGatewayFile(`${dir}/missing.json`)).rejects.toThrow(/missing\.json: file not found/)
		await Bun.write(`${dir}/typo.yaml`, 'channels:\n  - name: a\n    type: openai\n    base_url: https://x/v1\n    api_key: k\n    models: [m]\n    settings:\n      timeoutz:\n        first_byte_ms: 100\n')
		await expect(loadGatewayFile(`${dir}/typo.yaml`)).rejects.toThrow(`${dir}/typo.yaml: line 8, column 7: channels[0] ("a"): unknown field "settings.timeoutz": did you mean "timeouts"?`)
	})

	it('should name the line (and for JSON the column) where an unparsable file goes wrong', async () => {
		// QA: "cannot parse: JSON Parse error: Property name must be a string literal", with no place in a 40-line file.
		const dir = `/tmp/sb-cfg-lines-${process.pid}`
		const cases: Array<[string, string, string]> = [
			['trailing-comma.json', '{\n  "channels": [\n    {"name": "a", "type": "openai", "base_url": "https://x/v1", "api_key": "k", "models": ["m"],}\n  ]\n}\n', 'line 3, column 97'],
			['cut.json', '{"channels": [', 'line 1, column 15'],
			['bad-value.json', '{\n  "models": [\n    {"name": "m", "input_per_mtok": .5}\n  ]\n}', 'line 3, column 37'],
			['unclosed.yaml', 'channels:\n  - name: a\n    type: openai\n    base_url: https://x/v1\n    api_key: k\n    models: [m\n', 'line 6'],
			['tabs.yaml', 'models:\n  - name: m\n\tinput_per_mtok: 1\n', 'line 3'],
			['after-flow.yaml', 'channels: [\n  ]\nmodels:\n  - name: m\n  input_per_mtok: 1\n', 'line 5'],
		]
		for (const [name, text, where] of cases) {
			await Bun.write(`${dir}/${name}`, text)
			const err = await loadGatewayFile(`${dir}/${name}`).then(() => undefined, (e: Error) => e.message)
			expect({ name, err }).toEqual({ name, err: expect.stringContaining(`${dir}/${name}: cannot parse at ${where}: `) })
		}
	})

	it('should refuse a key written twice in one object, naming the line, rather than keep the last value', async () => {
		// Audit: a price copied and edited ("input_per_mtok" twice) was read last-wins, so one of the two billed silently.
		const dir = `/tmp/sb-cfg-dupes-${process.pid}`
		const cases: Array<[string, string, string]> = [
			['price.json', '{\n  "models": [\n    {"name": "m",\n     "input_per_mtok": 1,\n     "input_per_mtok": 2}\n  ]\n}\n', 'line 5, column 6: key "input_per_mtok" given twice (models[0].input_per_mtok)'],
			['deep.json', '{"channels": [{"name": "a", "type": "openai", "base_url": "https://x/v1", "api_key": "k", "models": ["m"],\n "settings": {"timeouts": {"idle_ms": 1, "idle_ms": 2}}}]}', 'line 2, column 42: key "idle_ms" given twice (channels[0].settings.timeouts.idle_ms)'],
			['top.json', '{"models": [],\n"models": [{"name": "m"}]}', 'line 2, column 1: key "models" given twice (models)'],
			['price.yaml', 'models:\n  - name: m\n    input_per_mtok: 1\n    output_per_mtok: 2\n    input_per_mtok: 3\n', 'line 5, column 5: key "input_per_mtok" given twice (models[0].input_per_mtok)'],
			['compact.yml', 'models:\n- name: m\n  input_per_mtok: 1\n- name: n\n  input_per_mtok: 1\n  input_per_mtok: 2\n', 'line 6, column 3: key "input_per_mtok" given twice (models[1].input_per_mtok)'],
		]
		for (const [name, text, where] of cases) {
			await Bun.write(`${dir}/${name}`, text)
			const err = await loadGatewayFile(`${dir}/${name}`).then(() => undefined, (e: Error) => e.message)
			expect({ name, err }).toEqual({ name, err: expect.stringContaining(`${dir}/${name}: ${where}`) })
		}
		// The same key in two entries, in a block scalar, or in two list items is no duplicate.
		await Bun.write(`${dir}/fine.yaml`, 'models:\n  - name: m\n    input_per_mtok: 1\n  - name: n\n    input_per_mtok: 1\n')
		expect((await loadGatewayFile(`${dir}/fine.yaml`)).models).toHaveLength(2)
		await Bun.write(`${dir}/fine.json`, '{"models": [{"name": "m", "input_per_mtok": 1}, {"name": "n", "input_per_mtok": 1}]}')
		expect((await loadGatewayFile(`${dir}/fine.json`)).models).toHaveLength(2)
	})

	it('should refuse a key written twice in one YAML flow mapping, naming line and column, as in a block mapping', async () => {
		// Audit: `{a: 1, a: 2}` was read last-wins although the same key twice in a block mapping is refused.
		const dir = `/tmp/sb-cfg-flow-dupes-${process.pid}`
		const cases: Array<[string, string, string]> = [
			['item.yaml', 'models:\n  - {name: m, input_per_mtok: 1, output_per_mtok: 2, input_per_mtok: 3}\n', 'line 2, column 54: key "input_per_mtok" given twice (models[0].input_per_mtok)'],
			['list.yaml', 'models: [{name: m, input_per_mtok: 1}, {name: n, input_per_mtok: 1, input_per_mtok: 2}]\n', 'line 1, column 69: key "input_per_mtok" given twice (models[1].input_per_mtok)'],
			['lines.yaml', 'models: [\n  {name: m,\n   input_per_mtok: 1,\n   "input_per_mtok": 2}\n]\n', 'line 4, column 4: key "input_per_mtok" given twice (models[0].input_per_mtok)'],
			['nested.yml', 'channels:\n  - name: a\n    type: openai\n    base_url: https://x/v1\n    api_key: k\n    models: [m]\n    settings: {timeouts: {idle_ms: 1, idle_ms: 2}}\n', 'line 7, column 39: key "idle_ms" given twice (channels[0].settings.timeouts.idle_ms)'],
			['document.yaml', "{models: [], 'models': [{name: m}]}\n", 'line 1, column 14: key "models" given twice (models)'],
		]
		for (const [name, text, where] of cases) {
			await Bun.write(`${dir}/${name}`, text)
			const err = await loadGatewayFile(`${dir}/${name}`).then(() => undefined, (e: Error) => e.message)
			expect({ name, err }).toEqual({ name, err: `${dir}/${name}: ${where}; remove one` })
		}
		// The same key in two flow entries, in a nested mapping, or inside a quoted value is no duplicate.
		await Bun.write(`${dir}/fine.yaml`, 'models: [{name: m, input_per_mtok: 1}, {name: n, input_per_mtok: 1, cache_read_per_mtok: 0.5}]\nchannels: [{name: "a, name: b", type: openai, base_url: "https://x/v1", api_key: k, models: [m, n], settings: {headers: {name: x}}}]\n')
		const fine = await loadGatewayFile(`${dir}/fine.yaml`)
		expect([fine.models.length, fine.channels.length]).toEqual([2, 1])
	})

	it('should say how a file is read when a YAML file lacks a .yaml name', async () => {
		// QA: gateway.conf holding YAML was refused as "JSON Parse error: Unexpected identifier", with no word of why JSON.
		const dir = `/tmp/sb-cfg-ext-${process.pid}`
		await Bun.write(`${dir}/gateway.conf`, 'models:\n  - name: m\n    input_per_mtok: 1\n')
		await expect(loadGatewayFile(`${dir}/gateway.conf`)).rejects.toThrow(`${dir}/gateway.conf: cannot parse at line 1, column 1: read as JSON (only a name ending .yaml or .yml is read as YAML): `)
	})

	it('should refuse an unknown key at every level, naming file, line and column, entry, key and the nearest known key', async () => {
		// An operator's `cached_input_per_mtok` (OpenAI's pricing page says "Cached input") must not leave the model billing no cache price.
		const dir = `/tmp/sb-cfg-unknown-${process.pid}`
		const ch = '{"name": "a", "type": "openai", "base_url": "https://x/v1", "api_key": "k", "models": ["m"]'
		const chYaml = 'channels:\n  - name: a\n    type: openai\n    base_url: https://x/v1\n    api_key: k\n    models: [m]\n'
		const cases: Array<[string, string, string]> = [
			['price.json', '{"models": [\n  {"name": "gpt-4o", "input_per_mtok": 2.5,\n   "cached_input_per_mtok": 1.25}\n]}\n', 'line 3, column 4: models[0] ("gpt-4o"): unknown field "cached_input_per_mtok": did you mean "cache_read_per_mtok"? (allowed: name, input_per_mtok,'],
			['price.yaml', 'models:\n  - name: gpt-4o\n    input_per_mtok: 2.5\n    cached_input_per_mtok: 1.25\n', 'line 4, column 5: models[0] ("gpt-4o"): unknown field "cached_input_per_mtok": did you mean "cache_read_per_mtok"? (allowed: name, input_per_mtok,'],
			['flow.yaml', 'models: [{name: m, input_per_mtok: 1, "enabeld": false}]\n', 'line 1, column 39: models[0] ("m"): unknown field "enabeld": did you mean "enabled"? (allowed: name,'],
			['top.json', '{"channels": [],\n "modles": [{"name": "m", "input_per_mtok": 1}]}', 'line 2, column 2: unknown field "modles": did you mean "models"? (allowed: channels, models)'],
			['top.yaml', 'channels: []\nmodles:\n  - name: m\n', 'line 2, column 1: unknown field "modles": did you mean "models"? (allowed: channels, models)'],
			['channel.json', `{"channels": [${ch},\n  "prioirty": 1}]}`, 'line 2, column 3: channels[0] ("a"): unknown field "prioirty": did you mean "priority"? (allowed: name, type, base_url, api_key, models, priority, weight, model_map, enabled, settings)'],
			['channel.yaml', `${chYaml}    baseurl: https://y/v1\n`, 'line 7, column 5: channels[0] ("a"): unknown field "baseurl": did you mean "base_url"? (allowed: name, type,'],
			['settings.json', `{"channels": [${ch}, "settings": {\n "responsesApi": false}}]}`, 'line 2, column 2: channels[0] ("a"): unknown field "settings.responsesApi": did you mean "responses_api"? (allowed: timeouts, headers,'],
			['settings.yaml', `${chYaml}    settings:\n      header:\n        x-title: t\n`, 'line 8, column 7: channels[0] ("a"): unknown field "settings.header": did you mean "headers"? (allowed: timeouts, headers,'],
			['timeouts.json', `{"channels": [${ch}, "settings": {"timeouts": {"idle_ms": 5,\n "first_byte": 1}}}]}`, 'line 2, column 2: channels[0] ("a"): unknown field "settings.timeouts.first_byte": did you mean "first_byte_ms"? (allowed: first_byte_ms, answer_ms, idle_ms)'],
			['timeouts.yaml', `${chYaml}    settings: {timeouts: {firstByteMs: 1}}\n`, 'line 7, column 27: channels[0] ("a"): unknown field "settings.timeouts.firstByteMs": did you mean "first_byte_ms"? (allowed: first_byte_ms, answer_ms, idle_ms)'],
			// No known key is near: the list alone.
			['far.yaml', 'models:\n  - name: m\n    cost: 1\n', 'line 3, column 5: models[0] ("m"): unknown field "cost" (allowed: name,'],
			// Not only unknown keys: a value of the wrong type is placed too.
			['type.yaml', 'models:\n  - name: m\n    input_per_mtok: "1"\n', 'line 3, column 5: models[0] ("m"): field "input_per_mtok" Expected number'],
		]
		for (const [name, text, message] of cases) {
			await Bun.write(`${dir}/${name}`, text)
			const err = await loadGatewayFile(`${dir}/${name}`).then(() => undefined, (e: Error) => e.message)
			const want = `${dir}/${name}: ${message}`
			expect({ name, err: err?.slice(0, want.length) }).toEqual({ name, err: want })
		}
		// The open maps stay open: any model_map key the models list, any header name.
		await Bun.write(`${dir}/open.yaml`, `${chYaml.replace('[m]', '[m, fast]')}    model_map: {fast: m}\n    settings:\n      headers: {x-anything: v, HTTP-Referer: r}\n`)
		expect((await loadGatewayFile(`${dir}/open.yaml`)).channels[0]).toMatchObject({ model_map: { fast: 'm' }, settings: { headers: { 'x-anything': 'v', 'HTTP-Referer': 'r' } } })
	})
})
