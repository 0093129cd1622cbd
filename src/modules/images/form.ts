/**
 * The multipart bodies of POST /v1/images/edits and /v1/images/variations, kept as they came (read by the plain form
 * parse hook, http/form-view.ts): the upstream gets the same fields in the same order with only `model` renamed,
 * files with their bytes, names and types, and repeated `image[]` fields repeated (the OpenAI SDK sends an array of
 * images as `image[]`, one image as `image`).
 * @module
 */
import type { FormValue } from '../../http/form-view'

/**
 * The form to send upstream: every field as it came and in its order, `model` set to the upstream's name (in place,
 * or added at the end when the caller left it to the default).
 * @example upstreamImageForm(formOf(request)!, 'gpt-image-1')
 */
export function upstreamImageForm(form: FormData, upstreamModel: string): FormData {
	const out = new FormData()
	let named = false
	for (const [k, v] of form.entries()) {
		if (k === 'model') {
			if (!named) out.append('model', upstreamModel)
			named = true
		} else {
			const value = v as FormValue
			if (value instanceof File) out.append(k, value, value.name)
			else out.append(k, value)
		}
	}
	if (!named) out.append('model', upstreamModel)
	return out
}
