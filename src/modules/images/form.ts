/**
 * The multipart bodies of POST /v1/images/edits and /v1/images/variations, kept as they came. Elysia's own form parser
 * reshapes a form (it JSON-parses fields that start with `{` or `[` and nests bracketed names), so these routes read
 * the form themselves: the route sees a plain view of it, and the upstream gets the same fields in the same order
 * with only `model` renamed, files with their bytes, names and types, and repeated `image[]` fields repeated
 * (the OpenAI SDK sends an array of images as `image[]`, one image as `image`).
 * @module
 */
/** A field's value: text or a file; a name given several times holds them all, in order. */
export type FormValue = string | File
export type FormView = Record<string, FormValue | FormValue[]>

const forms = new WeakMap<Request, FormData>()

/** The media type as Elysia hands it to a parse hook (the header without its parameters). */
const isMultipartType = (contentType: string): boolean => contentType.trim().toLowerCase() === 'multipart/form-data'

/**
 * Route parse hook: a multipart body is read here (and kept for `formOf`) and answered as its plain view; any other
 * body falls through to Elysia's parsers (`undefined`).
 * @example app.post('/v1/images/edits', handler, { parse: readImageForm, body: ImageEditRequest })
 */
export async function readImageForm({ request }: { request: Request }, contentType: string): Promise<FormView | undefined> {
	if (!isMultipartType(contentType)) return undefined
	const form = await request.formData()
	forms.set(request, form)
	return viewOf(form)
}

/** The form `readImageForm` kept for this request (undefined for a JSON body). */
export const formOf = (request: Request): FormData | undefined => forms.get(request)

/** Each name's value, or its values when given several times. */
export function viewOf(form: FormData): FormView {
	const view: FormView = Object.create(null)
	for (const [k, v] of form.entries()) {
		const had = view[k]
		view[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v]
	}
	return { ...view }
}

/** A name's values, whether given once or several times. */
export const valuesOf = (view: FormView, name: string): FormValue[] => {
	const v = view[name]
	return v === undefined ? [] : Array.isArray(v) ? v : [v]
}

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
