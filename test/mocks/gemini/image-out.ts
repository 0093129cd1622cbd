/**
 * Image output of Gemini's image models (ai.google.dev/gemini-api/docs/image-generation): `generateContent` on a model
 * whose name has `image`, with IMAGE among `generationConfig.responseModalities`, answers the image as an `inlineData`
 * part `{ mimeType: 'image/png', data }` (a text part first when TEXT is asked too), and `usageMetadata` counts it in
 * `candidatesTokensDetails` as modality IMAGE: 1290 tokens per image on Gemini 2.5 Flash Image, 1120 (1K, 2K) or
 * 2000 (4K) on Gemini 3 image models, which also think (`thoughtsTokenCount`; with `thinkingConfig.includeThoughts` a draft image comes first as a `thought` part).
 * Refused as Google refuses: `candidateCount` over 1 ("Multiple candidates is not enabled"), an `imageConfig.aspectRatio`
 * not in its list, an `imageSize` other than 1K/2K/4K or on a model without sizes. A prompt with `#noimage` makes no
 * image (finishReason IMAGE_SAFETY, no content).
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
	const prompt = inputTokens(conv)
	const usage: Obj = { promptTokenCount: prompt, totalTokenCount: prompt, promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }] }
	const head = { modelVersion: model, responseId: `img${prompt}` }
	if (conv.lastUserText.includes('#noimage')) return json({ candidates: [{ finishReason: 'IMAGE_SAFETY', index: 0 }], usageMetadata: usage, ...head })
	const size = asStr(pick(asObj(pick(cfg, 'imageConfig', 'image_config')) ?? {}, 'imageSize', 'image_size'))
	const image = imageTokens(model, size)
	const thinks = model.startsWith('gemini-3')
	const showThoughts = asObj(pick(cfg, 'thinkingConfig', 'thinking_config'))?.includeThoughts === true
	const text = asArr(pick(cfg, 'responseModalities', 'response_modalities')).some((m) => String(m).toUpperCase() === 'TEXT') ? 'Here is your image.' : ''
	const textTokens = text ? 4 : 0
	const data = Buffer.from(IMAGE_BYTES).toString('base64')
	const parts: Obj[] = [
		...(thinks && showThoughts ? [{ inlineData: { mimeType: 'image/png', data: Buffer.from('draft').toString('base64') }, thought: true }] : []),
		...(text ? [{ text }] : []),
		{ inlineData: { mimeType: 'image/png', data } },
	]
	Object.assign(usage, {
		candidatesTokenCount: image + textTokens,
		totalTokenCount: prompt + image + textTokens + (thinks ? IMAGE_THOUGHT_TOKENS : 0),
		candidatesTokensDetails: [...(text ? [{ modality: 'TEXT', tokenCount: textTokens }] : []), { modality: 'IMAGE', tokenCount: image }],
		...(thinks && { thoughtsTokenCount: IMAGE_THOUGHT_TOKENS }),
	})
	return json({ candidates: [{ content: { parts, role: 'model' }, finishReason: 'STOP', index: 0 }], usageMetadata: usage, ...head })
}
