/**
 * Bedrock's Converse and ConverseStream for the mock (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html), written from AWS's
 * documented shapes, apart from the gateway's codec:
 * - validation with Bedrock's 400 ValidationException words: only the documented top-level members; a non-empty
 *   `messages` starting with a user turn and alternating roles; one member per ContentBlock; no blank text (in a
 *   `toolResult`'s content either: hermes-agent#55092); images png/jpeg/gif/webp and documents of its nine formats as `source.bytes`, a document's name of the characters it
 *   allows; `toolUse`/`toolResult` need a `toolConfig`; every `toolResult` answers a
 *   `toolUse` of the turn before; a replayed `reasoningText.signature` must be the one issued for its text, and no
 *   `redactedContent` (the mock's models redact nothing, so one sent is another vendor's);
 * - the answer is the shared scenario's (shared/scenario.ts): `output.message.content`, `stopReason`, `usage`
 *   (`inputTokens` without the cache reads and writes, given apart);
 * - `additionalModelRequestFields`: only the fields each family's native request documents (anything else: 400
 *   "extraneous key [k] is not permitted"); reasoning: Amazon Nova 2 with `reasoningConfig.type: "enabled"` thinks and
 *   signs it (`converseSignature`); Claude with `thinking` (a budget of at least 1024 below `maxTokens`, or adaptive;
 *   no `temperature` with it) thinks and signs; gpt-oss with `reasoning_effort` thinks unsigned; DeepSeek-R1 always
 *   thinks, unsigned;
 * - prompt caching (https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html): `cachePoint` blocks
 *   after content in `system` and `messages` for Claude and Nova (Micro, Lite, Pro, Premier), in `toolConfig.tools`
 *   for Claude only, a `ttl` for Claude only, at most four per request; any other model or place is a 400. The prompt
 *   up to the longest cache point already cached is read from it (`cacheReadInputTokens`), the rest up to the last
 *   cache point written to it (`cacheWriteInputTokens`), each point's prefix cached for the next request;
 * - `additionalModelResponseFieldPaths: ["/stop_sequence"]` gives Claude's matched stop sequence in
 *   `additionalModelResponseFields` (whole answers and `messageStop`);
 * - streams: messageStart, contentBlockStart (tool calls only), contentBlockDelta, contentBlockStop, messageStop,
 *   metadata, each an event-stream `event` message whose payload carries AWS's `p` padding.
 * @module
 */
import { asArr, asNum, asObj, asStr, type Obj } from '../shared/json'
import { argKeyOf, type Conversation, forcedTool, plan, type Plan, type ToolSpec } from '../shared/scenario'
import { base64, countWords, fragments, hash36, splitPieces } from '../shared/text'
import { frameMessage } from './event-stream'

/**
 * The signature the mock gives a Nova 2 model's reasoning, and expects back with the same text.
 * @example converseSignature('Let me think about hi.') // 'cvsig_…'
 */
export const converseSignature = (thinking: string): string => `cvsig_${base64(`mock-converse|${hash36(thinking)}|${thinking.length}`)}`

const TOP_LEVEL = new Set([
	'messages',
	'system',
	'inferenceConfig',
	'toolConfig',
	'guardrailConfig',
	'additionalModelRequestFields',
	'additionalModelResponseFieldPaths',
	'promptVariables',
	'requestMetadata',
	'performanceConfig',
	'serviceTier',
])
const BLOCK_MEMBERS = new Set(['text', 'image', 'document', 'video', 'toolUse', 'toolResult', 'guardContent', 'cachePoint', 'reasoningContent', 'citationsContent'])
const IMAGE_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp'])
const DOCUMENT_FORMATS = new Set(['pdf', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'html', 'txt', 'md'])

/** A cache point's prefix: its key and tokens. */
type CachePrefix = { key: string; tokens: number }

/** What the request asks beyond the conversation: its cache points' prefixes (in order), Claude's stop sequence back. */
export type ConverseRead = { conv: Conversation; signs: boolean; cache?: CachePrefix[]; stopField: boolean } | { invalid: string }

type Family = 'claude' | 'nova' | 'nova2' | 'gpt-oss' | 'deepseek-r1' | 'cohere' | 'mistral-text' | 'other'

/** The family of a model id (the mock's own reading, apart from the gateway's). */
function familyOf(model: string): Family {
	if (model.includes('anthropic.claude')) return 'claude'
	if (model.includes('amazon.nova-2')) return 'nova2'
	if (/amazon\.nova-(micro|lite|pro|premier)/.test(model)) return 'nova'
	if (model.includes('openai.gpt-oss')) return 'gpt-oss'
	if (model.includes('deepseek.r1')) return 'deepseek-r1'
	if (model.includes('cohere.command-r')) return 'cohere'
	if (/mistral\.(mistral-7b|mixtral-8x7b|mistral-large-2402|mistral-small-2402)/.test(model)) return 'mistral-text'
	return 'other'
}

/** The native request fields each family documents (model-parameters-*.html), as `additionalModelRequestFields` takes them. */
const FIELDS: Record<Family, string[]> = {
	claude: ['thinking', 'top_k', 'output_config', 'anthropic_beta'],
	nova: ['inferenceConfig'],
	nova2: ['inferenceConfig', 'reasoningConfig'],
	'gpt-oss': ['reasoning_effort'],
	'deepseek-r1': [],
	cohere: ['k', 'seed', 'frequency_penalty', 'presence_penalty'],
	'mistral-text': ['top_k'],
	other: [],
}

const NO_CACHE = 'You invoked an unsupported model or your request did not allow prompt caching. See the documentation for more information.'

/** A `cachePoint` block's faults: the model takes none (there), or the block is malformed. */
function cachePointFault(family: Family, where: 'content' | 'tools', block: Obj): string | undefined {
	const cp = asObj(block.cachePoint)
	if (cp?.type !== 'default') return 'cachePoint.type: must be default'
	if (family !== 'claude' && (family !== 'nova' || where === 'tools')) return NO_CACHE
	if (cp.ttl !== undefined && (family !== 'claude' || (cp.ttl !== '5m' && cp.ttl !== '1h'))) return NO_CACHE
	return undefined
}

/** The tools of `toolConfig.tools[].toolSpec`. */
function toolSpecs(config: Obj | undefined): ToolSpec[] {
	const out: ToolSpec[] = []
	for (const t of asArr(config?.tools)) {
		const spec = asObj(asObj(t)?.toolSpec)
		const name = asStr(spec?.name)
		const schema = asObj(spec?.inputSchema)?.json
		if (name) out.push({ name, argKey: argKeyOf(schema), schema })
	}
	return out
}

/** Whether the model thinks, and signs its reasoning; or Bedrock's words refusing the family's fields. */
function reasoningOf(family: Family, b: Obj): { thinking: boolean; signs: boolean } | { invalid: string } {
	const extra = asObj(b.additionalModelRequestFields) ?? {}
	for (const k of Object.keys(extra)) if (!FIELDS[family].includes(k)) return { invalid: `Malformed input request: #: extraneous key [${k}] is not permitted, please reformat your input and try again.` }
	if (family === 'nova2' && asObj(extra.reasoningConfig)?.type === 'enabled') return { thinking: true, signs: true }
	if (family === 'gpt-oss' && typeof extra.reasoning_effort === 'string') return { thinking: true, signs: false }
	const thinking = asObj(extra.thinking)
	if (family === 'claude' && thinking && thinking.type !== 'disabled') {
		const inference = asObj(b.inferenceConfig)
		if (inference?.temperature !== undefined) return { invalid: '`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking' }
		if (thinking.type === 'enabled') {
			const budget = asNum(thinking.budget_tokens) ?? 0
			if (budget < 1024) return { invalid: 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024' }
			if (budget >= (asNum(inference?.maxTokens) ?? 0)) return { invalid: '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size' }
		} else if (thinking.type !== 'adaptive') return { invalid: 'thinking.type: Input tag does not match any of the expected tags' }
		return { thinking: true, signs: true }
	}
	return { thinking: family === 'deepseek-r1', signs: false }
}

/** Reads and validates a Converse body; the conversation for the scenario, or Bedrock's ValidationException words. */
export function readConverse(model: string, body: unknown): ConverseRead {
	const b = asObj(body)
	if (!b) return { invalid: 'Malformed input request, please reformat your input and try again.' }
	for (const k of Object.keys(b)) if (!TOP_LEVEL.has(k)) return { invalid: `Unknown parameter in input: "${k}", must be one of: ${[...TOP_LEVEL].join(', ')}` }
	const family = familyOf(model)
	const messages = asArr(b.messages).map((m) => asObj(m) ?? {})
	if (!messages.length) return { invalid: 'A conversation must start with a user message. Try again with a conversation that starts with a user message.' }
	const toolConfig = asObj(b.toolConfig)
	for (const t of asArr(toolConfig?.tools)) {
		const tool = asObj(t) ?? {}
		if ('cachePoint' in tool) {
			const fault = cachePointFault(family, 'tools', tool)
			if (fault) return { invalid: fault }
		}
	}
	const inputTexts: string[] = []
	// The prompt in order, and the part of it before each cache point.
	const prompt: string[] = []
	const cached: string[][] = []
	for (const [i, raw] of asArr(b.system).entries()) {
		const s = asObj(raw) ?? {}
		if ('cachePoint' in s) {
			const fault = cachePointFault(family, 'content', s) ?? (i === 0 ? 'system.0: a cachePoint must follow content' : undefined)
			if (fault) return { invalid: fault }
			cached.push([...prompt])
			continue
		}
		const text = asStr(s.text)
		if (text === undefined) continue
		inputTexts.push(text)
		prompt.push(text)
	}
	let images = 0
	let lastUserText = ''
	let lastUserImages = 0
	let toolResults: string[] | undefined
	let calls = new Set<string>()
	for (const [i, m] of messages.entries()) {
		const role = m.role
		if (role !== 'user' && role !== 'assistant') return { invalid: `messages.${i}.role: must be one of user, assistant` }
		if (i === 0 && role !== 'user') return { invalid: 'A conversation must start with a user message. Try again with a conversation that starts with a user message.' }
		if (i > 0 && messages[i - 1]!.role === role) return { invalid: 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.' }
		const content = asArr(m.content)
		if (!content.length) return { invalid: `The content field in the Message object at messages.${i} is empty. Add a ContentBlock object to the content field and try again.` }
		const texts: string[] = []
		const results: string[] = []
		const answered = calls
		calls = new Set()
		let imgs = 0
		for (const [j, raw] of content.entries()) {
			const block = asObj(raw) ?? {}
			const at = `messages.${i}.content.${j}`
			const keys = Object.keys(block)
			if (keys.length !== 1 || !BLOCK_MEMBERS.has(keys[0]!)) return { invalid: `${at}: a ContentBlock must have exactly one member of ${[...BLOCK_MEMBERS].join(', ')}` }
			if ('cachePoint' in block) {
				const fault = cachePointFault(family, 'content', block) ?? (j === 0 ? `${at}: a cachePoint must follow content` : undefined)
				if (fault) return { invalid: fault }
				cached.push([...prompt])
			} else if ('text' in block) {
				const text = asStr(block.text)
				if (!text?.trim()) return { invalid: `The text field in the ContentBlock object at ${at} is blank. Add text to the text field, and try again.` }
				texts.push(text)
				prompt.push(text)
			} else if ('image' in block) {
				const img = asObj(block.image)
				if (!IMAGE_FORMATS.has(asStr(img?.format) ?? '') || typeof asObj(img?.source)?.bytes !== 'string') return { invalid: `${at}.image: a format of png, jpeg, gif or webp and source.bytes are required` }
				imgs++
			} else if ('document' in block) {
				const doc = asObj(block.document)
				const name = asStr(doc?.name) ?? ''
				if (!DOCUMENT_FORMATS.has(asStr(doc?.format) ?? '') || typeof asObj(doc?.source)?.bytes !== 'string') return { invalid: `${at}.document: a format of ${[...DOCUMENT_FORMATS].join(', ')} and source.bytes are required` }
				if (!/^[A-Za-z0-9\-()[\] ]{1,200}$/.test(name) || name.includes('  '))
					return { invalid: `${at}.document.name: The document file name can only contain alphanumeric characters, whitespace characters, hyphens, parentheses, and square brackets. The name can't contain more than one consecutive whitespace character.` }
			} else if ('toolUse' in block) {
				if (!toolConfig) return { invalid: 'The toolConfig field must be defined when using toolUse and toolResult content blocks.' }
				const id = asStr(asObj(block.toolUse)?.toolUseId)
				if (role !== 'assistant' || !id || !/^[a-zA-Z0-9_-]{1,64}$/.test(id)) return { invalid: `${at}.toolUse: an assistant block with a toolUseId matching ^[a-zA-Z0-9_-]{1,64}$ is required` }
				calls.add(id)
			} else if ('toolResult' in block) {
				if (!toolConfig) return { invalid: 'The toolConfig field must be defined when using toolUse and toolResult content blocks.' }
				const r = asObj(block.toolResult) ?? {}
				const id = asStr(r.toolUseId) ?? ''
				if (!answered.has(id))
					return { invalid: `Expected toolResult blocks at ${at} for the following Ids: ${[...answered].join(', ')}, but found: ${id}` }
				for (const [k, c] of asArr(r.content).entries()) {
					const text = asObj(c)?.text
					if (text !== undefined && !asStr(text)?.trim())
						return { invalid: `The text field in the ToolResultContentBlock object at ${at}.toolResult.content.${k} is blank. Add text to the text field, and try again.` }
				}
				const result = asArr(r.content)
					.map((c) => asStr(asObj(c)?.text) ?? '')
					.join(' ')
				results.push(result)
				prompt.push(result)
			} else if ('reasoningContent' in block) {
				const rt = asObj(asObj(block.reasoningContent)?.reasoningText)
				const text = asStr(rt?.text) ?? ''
				if (role !== 'assistant') return { invalid: `${at}.reasoningContent: only in assistant messages` }
				// The mock's models redact nothing: redacted reasoning it is sent was encrypted by someone else (mock's words).
				if (asObj(block.reasoningContent)?.redactedContent !== undefined) return { invalid: `${at}.reasoningContent.redactedContent: The model could not decrypt the redacted reasoning content.` }
				if (rt?.signature !== undefined && rt.signature !== converseSignature(text)) return { invalid: `${at}.reasoningContent.reasoningText.signature: The signature is invalid for the reasoning text.` }
			}
		}
		inputTexts.push(...texts, ...results)
		images += imgs
		if (role !== 'user') continue
		if (texts.length) lastUserText = texts.join(' ')
		lastUserImages = imgs
		toolResults = results.length ? results : undefined
	}
	const inference = asObj(b.inferenceConfig)
	const tools = toolSpecs(toolConfig)
	const choice = asObj(toolConfig?.toolChoice)
	const reasoning = reasoningOf(family, b)
	if ('invalid' in reasoning) return reasoning
	const { thinking, signs } = reasoning
	const paths = asArr(b.additionalModelResponseFieldPaths)
	if (paths.some((p) => typeof p !== 'string' || !p.startsWith('/'))) return { invalid: 'additionalModelResponseFieldPaths: each must be a JSON Pointer' }
	if (cached.length > 4) return { invalid: `The number of cache points exceeds the maximum of 4 (${cached.length} were given).` }
	const points = cached.map((texts) => ({ key: `${model}|${hash36(texts.join('\u0000'))}`, tokens: texts.reduce((n, t) => n + countWords(t), 0) })).filter((c) => c.tokens > 0)
	return {
		signs,
		stopField: family === 'claude' && paths.includes('/stop_sequence'),
		...(points.length > 0 && { cache: points }),
		conv: {
			inputTexts,
			images,
			lastUserText,
			lastUserImages: toolResults ? 0 : lastUserImages,
			toolResults,
			tools,
			stop: asArr(inference?.stopSequences).filter((s): s is string => typeof s === 'string'),
			maxTokens: asNum(inference?.maxTokens),
			thinking,
			forcedCall: forcedTool(tools, { required: choice !== undefined && 'any' in choice, name: asStr(asObj(choice?.tool)?.name) }),
		},
	}
}

const STOP_REASON: Record<Plan['finish'], string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', stop_sequence: 'stop_sequence', refusal: 'content_filtered' }

/** The scenario's answer as Converse content blocks. */
function contentOf(p: Plan, signs: boolean, seed: string): Obj[] {
	const out: Obj[] = []
	if (p.thinking) out.push({ reasoningContent: { reasoningText: { text: p.thinking, ...(signs && { signature: converseSignature(p.thinking) }) } } })
	if (p.text) out.push({ text: p.text })
	p.calls.forEach((c, i) => out.push({ toolUse: { toolUseId: `tooluse_${hash36(`${seed}|${i}`).slice(0, 22)}`, name: c.name, input: c.args } }))
	return out
}

/** `TokenUsage`: the scenario counts the cache in its input; Converse gives it apart. */
function usageOf(p: Plan): Obj {
	const cacheWrite = p.usage.cacheWrite ?? 0
	const inputTokens = p.usage.input - p.usage.cached - cacheWrite
	return { inputTokens, outputTokens: p.usage.output, totalTokens: p.usage.input + p.usage.output, cacheReadInputTokens: p.usage.cached, cacheWriteInputTokens: cacheWrite }
}

/**
 * The scenario's answer to a read conversation: the whole body and the stream's events (name, payload). `cache`: the
 * prefixes written so far, for cache reads and writes.
 */
export function answerConverse(read: Extract<ConverseRead, { conv: Conversation }>, cache: Set<string> = new Set()): { body: Obj; events: Array<[string, Obj]> } {
	const p = plan(read.conv)
	if (read.cache) {
		const hit = read.cache.reduce((n, c) => (cache.has(c.key) ? Math.max(n, c.tokens) : n), 0)
		const upTo = Math.max(...read.cache.map((c) => c.tokens))
		for (const c of read.cache) cache.add(c.key)
		p.usage = { ...p.usage, cached: hit, cacheWrite: upTo - hit }
	}
	const seed = `${read.conv.lastUserText}|${read.conv.inputTexts.length}`
	const content = contentOf(p, read.signs, seed)
	const stopReason = STOP_REASON[p.finish]
	const usage = usageOf(p)
	const fields = read.stopField && p.finish === 'stop_sequence' && p.stopSequence ? { additionalModelResponseFields: { stop_sequence: p.stopSequence } } : {}
	const body = { output: { message: { role: 'assistant', content } }, stopReason, usage, metrics: { latencyMs: 42 }, ...fields }
	const events: Array<[string, Obj]> = [['messageStart', { role: 'assistant' }]]
	content.forEach((block, i) => {
		const delta = (d: Obj) => events.push(['contentBlockDelta', { contentBlockIndex: i, delta: d }])
		const reasoning = asObj(asObj(block.reasoningContent)?.reasoningText)
		if (reasoning) {
			for (const piece of splitPieces(String(reasoning.text))) delta({ reasoningContent: { text: piece } })
			if (reasoning.signature) delta({ reasoningContent: { signature: reasoning.signature } })
		} else if (typeof block.text === 'string') for (const piece of splitPieces(block.text)) delta({ text: piece })
		else {
			const use = asObj(block.toolUse)!
			events.push(['contentBlockStart', { contentBlockIndex: i, start: { toolUse: { toolUseId: use.toolUseId, name: use.name } } }])
			for (const piece of fragments(JSON.stringify(use.input), 3)) delta({ toolUse: { input: piece } })
		}
		events.push(['contentBlockStop', { contentBlockIndex: i }])
	})
	events.push(['messageStop', { stopReason, ...fields }], ['metadata', { usage, metrics: { latencyMs: 42 } }])
	return { body, events }
}

/** One ConverseStream event as an event-stream message; the payload padded with `p` as AWS pads it. */
export const converseEvent = (type: string, payload: Obj) =>
	frameMessage({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify({ ...payload, p: 'abcdefghijklmnop'.slice(0, 1 + (countWords(JSON.stringify(payload)) % 16)) }))
