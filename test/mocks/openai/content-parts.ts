/**
 * OpenAI's checks on user content parts (platform.openai.com/docs/api-reference/chat/create): the part types it knows,
 * `file` with `file_data` (a base64 data URL) or `file_id`, `input_audio` with base64 `data` in `format` wav or mp3, and
 * only text and refusal parts in assistant messages. Error texts follow OpenAI's "Invalid value" wording.
 * @module
 */

import { asArr, asObj, type Obj } from '../shared/json'
import type { JsonReply } from '../shared/reply'
import { openaiError } from './errors'

const USER_TYPES = ['text', 'image_url', 'input_audio', 'file']
const ASSISTANT_TYPES = ['text', 'refusal']
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

const invalidValue = (value: unknown, allowed: string[], param: string) =>
	openaiError(400, `Invalid value: '${String(value)}'. Supported values are: ${allowed.map((a) => `'${a}'`).join(', ')}.`, param, 'invalid_value')

function checkFile(part: Obj, at: string): JsonReply | undefined {
	const file = asObj(part.file)
	if (!file) return openaiError(400, `Missing required parameter: '${at}.file'.`, `${at}.file`, 'missing_required_parameter')
	const data = file.file_data
	if ((data === undefined) === (file.file_id === undefined))
		return openaiError(400, `Invalid '${at}.file': exactly one of 'file_data' or 'file_id' must be given.`, `${at}.file`, 'invalid_value')
	if (data !== undefined && (typeof data !== 'string' || !/^data:[^;,]+;base64,[A-Za-z0-9+/]*={0,2}$/.test(data)))
		return openaiError(400, `Invalid '${at}.file.file_data': expected a base64-encoded data URL.`, `${at}.file.file_data`, 'invalid_value')
}

function checkAudio(part: Obj, at: string): JsonReply | undefined {
	const audio = asObj(part.input_audio)
	if (!audio) return openaiError(400, `Missing required parameter: '${at}.input_audio'.`, `${at}.input_audio`, 'missing_required_parameter')
	if (audio.format !== 'wav' && audio.format !== 'mp3') return invalidValue(audio.format, ['wav', 'mp3'], `${at}.input_audio.format`)
	if (typeof audio.data !== 'string' || !BASE64.test(audio.data))
		return openaiError(400, `Invalid '${at}.input_audio.data': expected base64-encoded audio.`, `${at}.input_audio.data`, 'invalid_value')
}

/** The content parts of every user and assistant message. */
export function checkContentParts(messages: Obj[]): JsonReply | undefined {
	for (let i = 0; i < messages.length; i++) {
		const m = messages[i]!
		if (m.role !== 'user' && m.role !== 'assistant') continue
		const allowed = m.role === 'user' ? USER_TYPES : ASSISTANT_TYPES
		const parts = asArr(m.content)
		for (let j = 0; j < parts.length; j++) {
			const part = asObj(parts[j]) ?? {}
			const at = `messages[${i}].content[${j}]`
			if (!allowed.includes(String(part.type))) return invalidValue(part.type, allowed, `${at}.type`)
			const bad = part.type === 'file' ? checkFile(part, at) : part.type === 'input_audio' ? checkAudio(part, at) : undefined
			if (bad) return bad
		}
	}
}
