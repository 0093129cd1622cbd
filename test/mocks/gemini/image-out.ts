/**
 * Image output of Gemini's image models (ai.google.dev/gemini-api/docs/image-generation): `generateContent` on a model
 * whose name has `image`, with IMAGE among `generationConfig.responseModalities`, answers the image as an `inlineData`
 * part `{ mimeType: 'image/png', data }` (a text part first when TEXT is asked too), and `usageMetadata` counts it in
 * `candidatesTokensDetails` as modality IMAGE: 1290 tokens per image on Gemini 2.5 Flash Image, 1120 (1K, 2K) or
 * 2000 (4K) on Gemini 3 image models, which also think (`thoughtsTokenCount`; with `thinkingConfig.includeThoughts` a draft image comes first as a `thought` part).
 * Refused as Google refuses: `candidateCount` over 1 ("Multiple candidates is not enabled"), an `imageConfig.aspectRatio`
 * not in its list, an `imageSize` other than 1K/2K/4K or on a model without sizes. A prompt with `#noimage` makes no
 * image (finishReason IMAGE_SAFETY, no content).
 * Input images (`inlineData` parts, as an edit sends them) count in `promptTokenCount` and as modality IMAGE in
 * `promptTokensDetails` as Google documents (ai.google.dev/gemini-api/docs/tokens): 258 tokens for an image of at most
 * 384 pixels a side, else 258 per 768x768 tile; Gemini 3 models 1120 an image (their default high media resolution).
 * The size is read from a PNG's header; an image of another format counts as one tile.
 * @module
 */

import { asArr, asNum, asObj, asStr, pick, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { inputTokens, type Conversation } from '../shared/scenario'
import { badRequest, geminiError } from './errors'
import { configOf } from './read'
import { IMAGE_BYTES } from './predict'

const RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9']
/** Thinking tokens a Gemini 3 image model reports per answer. */
export const IMAGE_THOUGHT_TOKENS = 200

/** Output tokens of one image of `model` at `imageSize`. */
export const imageTokens = (model: string, size: string | undefined): number => (model.startsWith('gemini-3') ? (size === '4K' ? 2000 : 1120) : 1290)

/** A PNG's width and height from its IHDR chunk, or undefined for other bytes. */
function pngSize(b: Buffer): [number, number] | undefined {
	if (b.length < 24 || b[0] !== 0x89 || b.toString('latin1', 1, 4) !== 'PNG') return undefined
	return [b.readUInt32BE(16), b.readUInt32BE(20)]
}

/** Input tokens of the images in a request's contents, as Google counts them for `model`. */
export function inputImageTokens(model: string, b: Obj): number {
	let n = 0
	for (const c of asArr(b.contents)) {
		for (const p of asArr(asObj(c)?.parts)) {
			const inline = asObj(pick(asObj(p) ?? {}, 'inlineData', 'inline_data'))
			if (!inline || !String(pick(inline, 'mimeType', 'mime_type')).startsWith('image/')) continue
			if (model.startsWith('gemini-3')) {
				n += 1120
				continue
			}
			const [w, h] = pngSize(Buffer.from(String(inline.data), 'base64')) ?? [1, 1]
			n += w <= 384 && h <= 384 ? 258 : Math.ceil(w / 768) * Math.ceil(h / 768) * 258
		}
	}
	return n
}

/** Whether this call asks an image model for images. */
export function asksImage(model: string, b: Obj): boolean {
	if (!model.includes('image')) return false
	return asArr(pick(configOf(b), 'responseModalities', 'response_modalities')).some((m) => String(m).toUpperCase() === 'IMAGE')
}

/** Google's refusals of an image request, or undefined. */
function refusal(model: string, cfg: Obj): Reply | undefined {
	const n = asNum(pick(cfg, 'candidateCount', 'candidate_count'))
	if (n !== undefined && n > 1) return geminiError(400, `Multiple candidates is not enabled for models/${model}`)
	const image = asObj(pick(cfg, 'imageConfig', 'image_config')) ?? {}
	const ratio = pick(image, 'aspectRatio', 'aspect_ratio')
	if (ratio !== undefined && !RATIOS.includes(String(ratio)))
		return badRequest([{ field: 'generation_config.image_config.aspect_ratio', description: `Unsupported aspect ratio: ${String(ratio)}. Supported values: ${RATIOS.join(', ')}.` }])
	const size = pick(image, 'imageSize', 'image_size')
	if (size !== undefined && (!model.startsWith('gemini-3') || !['1K', '2K', '4K'].includes(String(size))))
		return badRequest([{ field: 'generation_config.image_config.image_size', description: `Unsupported image size: ${String(size)} for models/${model}.` }])
}

/** The whole (unstreamed) answer of an image model to `conv`. */
export function imageAnswer(model: string, b: Obj, conv: Conversation): Reply {
	const cfg = configOf(b)
	const bad = refusal(model, cfg)
	if (bad) return bad
	const text = inputTokens({ ...conv, images: 0 })
	const images = inputImageTokens(model, b)
	const prompt = text + images
	const details = [{ modality: 'TEXT', tokenCount: text }, ...(images ? [{ modality: 'IMAGE', tokenCount: images }] : [])]
	const usage: Obj = { promptTokenCount: prompt, totalTokenCount: prompt, promptTokensDetails: details }
	const head = { modelVersion: model, responseId: `img${prompt}` }
	if (conv.lastUserText.includes('#noimage')) return json({ candidates: [{ finishReason: 'IMAGE_SAFETY', index: 0 }], usageMetadata: usage, ...head })
	const size = asStr(pick(asObj(pick(cfg, 'imageConfig', 'image_config')) ?? {}, 'imageSize', 'image_size'))
	const image = imageTokens(model, size)
	const thinks = model.startsWith('gemini-3')
	const showThoughts = asObj(pick(cfg, 'thinkingConfig', 'thinking_config'))?.includeThoughts === true
	const said = asArr(pick(cfg, 'responseModalities', 'response_modalities')).some((m) => String(m).toUpperCase() === 'TEXT') ? 'Here is your image.' : ''
	const textTokens = said ? 4 : 0
	const data = Buffer.from(IMAGE_BYTES).toString('base64')
	const parts: Obj[] = [
		...(thinks && showThoughts ? [{ inlineData: { mimeType: 'image/png', data: Buffer.from('draft').toString('base64') }, thought: true }] : []),
		...(said ? [{ text: said }] : []),
		{ inlineData: { mimeType: 'image/png', data } },
	]
	Object.assign(usage, {
		candidatesTokenCount: image + textTokens,
		totalTokenCount: prompt + image + textTokens + (thinks ? IMAGE_THOUGHT_TOKENS : 0),
		candidatesTokensDetails: [...(said ? [{ modality: 'TEXT', tokenCount: textTokens }] : []), { modality: 'IMAGE', tokenCount: image }],
		...(thinks && { thoughtsTokenCount: IMAGE_THOUGHT_TOKENS }),
	})
	return json({ candidates: [{ content: { parts, role: 'model' }, finishReason: 'STOP', index: 0 }], usageMetadata: usage, ...head })
}
