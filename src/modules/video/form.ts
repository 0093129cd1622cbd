/**
 * The multipart body of a video submit sent upstream: OpenAI's `POST /videos` takes `multipart/form-data` with
 * `input_reference` as an image file (developers.openai.com/api/reference/resources/videos/methods/create).
 * @module
 */

/**
 * Every field of the (already renamed) submit as a form field; files keep their bytes, name and type, arrays become
 * repeated fields, other values their string form.
 * @example upstreamVideoForm({ model: 'sora-2', prompt: 'a cat', input_reference: file })
 */
export function upstreamVideoForm(body: Record<string, unknown>): FormData {
	const fd = new FormData()
	for (const [k, v] of Object.entries(body)) {
		if (v === undefined || v === null) continue
		for (const item of Array.isArray(v) ? v : [v]) {
			if (item instanceof File) fd.append(k, item, item.name)
			else if (item instanceof Blob) fd.append(k, item, 'blob')
			else fd.append(k, typeof item === 'object' ? JSON.stringify(item) : String(item))
		}
	}
	return fd
}
