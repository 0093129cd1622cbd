/**
 * Gemini checks on media parts, with the API's own "Invalid JSON payload" wording for unknown fields: a part's fields
 * are those of `Part` (ai.google.dev/api/caching#Part), `inlineData` needs `mimeType` and base64 `data`, `fileData`
 * needs `fileUri`, and `functionResponse.parts` hold only `inlineData` or `fileData` (FunctionResponsePart).
 * @module
 */

import { asArr, asObj, pick, type Obj } from '../shared/json'
import type { JsonReply } from '../shared/reply'
import { badRequest, geminiError } from './errors'

const PART_FIELDS = new Set(
	[
		'text thought thoughtSignature inlineData fileData functionCall functionResponse executableCode codeExecutionResult videoMetadata partMetadata mediaResolution',
		'thought_signature inline_data file_data function_call function_response executable_code code_execution_result video_metadata part_metadata media_resolution',
	]
		.join(' ')
		.split(' '),
)

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/

function checkBlob(blob: Obj, at: string): JsonReply | undefined {
	if (typeof pick(blob, 'mimeType', 'mime_type') !== 'string') return geminiError(400, `* GenerateContentRequest.${at}.mime_type: mime_type is required.\n`)
	const data = blob.data
	if (typeof data !== 'string' || !BASE64.test(data))
		return badRequest([{ field: `${at}.data`, description: `Invalid value at '${at}.data' (TYPE_BYTES), Base64 decoding failed for "${String(data).slice(0, 20)}"` }])
}

function checkMedia(part: Obj, at: string): JsonReply | undefined {
	const inline = asObj(pick(part, 'inlineData', 'inline_data'))
	if (inline) return checkBlob(inline, `${at}.inline_data`)
	const file = asObj(pick(part, 'fileData', 'file_data'))
	if (file && typeof pick(file, 'fileUri', 'file_uri') !== 'string') return geminiError(400, `* GenerateContentRequest.${at}.file_data.file_uri: file_uri is required.\n`)
}

/** Every part of every content: known fields only, well-formed media, and media-only function response parts. */
export function checkParts(contents: unknown[]): JsonReply | undefined {
	for (let i = 0; i < contents.length; i++) {
		const parts = asArr(asObj(contents[i])?.parts)
		for (let j = 0; j < parts.length; j++) {
			const part = asObj(parts[j]) ?? {}
			const at = `contents[${i}].parts[${j}]`
			const unknown = Object.keys(part).find((k) => !PART_FIELDS.has(k))
			if (unknown) return badRequest([{ field: at, description: `Invalid JSON payload received. Unknown name "${unknown}" at '${at}': Cannot find field.` }])
			const bad = checkMedia(part, at)
			if (bad) return bad
			const fr = asObj(pick(part, 'functionResponse', 'function_response'))
			const sub = asArr(fr?.parts)
			for (let k = 0; k < sub.length; k++) {
				const p = asObj(sub[k]) ?? {}
				const subAt = `${at}.function_response.parts[${k}]`
				const other = Object.keys(p).find((key) => !['inlineData', 'inline_data', 'fileData', 'file_data'].includes(key))
				if (other) return badRequest([{ field: subAt, description: `Invalid JSON payload received. Unknown name "${other}" at '${subAt}': Cannot find field.` }])
				const badSub = checkMedia(p, subAt)
				if (badSub) return badSub
			}
		}
	}
}
