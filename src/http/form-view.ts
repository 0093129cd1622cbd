/**
 * Multipart bodies read as they came. Elysia's own form parser reshapes a form: it JSON-parses a field whose text
 * starts with `{` or `[` (a prompt written as JSON becomes an object, refused as "Expected string", or sent on
 * re-serialized), and nests bracketed names. The upload routes read the form themselves with this parse hook: the
 * route sees a plain view of it (each name's text or file, or its values in order when the name repeats), and the
 * request keeps the form itself for a relay that sends it on field by field.
 * @module
 */
import { bodyBlob } from './body-spool'
import { formLimitError } from './form-limits'
import { parseMultipart, scanForm } from './multipart'

/** A field's value: text or a file; a name given several times holds them all, in order. */
export type FormValue = string | File
export type FormView = Record<string, FormValue | FormValue[]>

const forms = new WeakMap<Request, FormData>()

/** The media type as Elysia hands it to a parse hook (the header without its parameters). */
const isMultipartType = (contentType: string): boolean => contentType.trim().toLowerCase() === 'multipart/form-data'

/**
 * Route parse hook: a multipart body is read here (and kept for `formOf`) and answered as its plain view; any other
 * body falls through to Elysia's parsers (`undefined`). Its bytes are read first and held to MAX_FORM_PARTS parts and
 * MAX_PART_HEADER_BYTES of headers a part (form-limits.ts) before the parser sees them.
 * @example app.post('/v1/images/edits', handler, { parse: readPlainForm, body: ImageEditRequest })
 */
export async function readPlainForm({ request }: { request: Request }, contentType: string): Promise<FormView | undefined> {
	if (!isMultipartType(contentType)) return undefined
	const type = request.headers.get('content-type') ?? contentType
	const form = await readForm(await bodyBlob(request), type)
	forms.set(request, form)
	return viewOf(form)
}

/**
 * The form in a multipart body, held to MAX_FORM_PARTS parts and MAX_PART_HEADER_BYTES of headers a part
 * (form-limits.ts: a GatewayError thrown) before any parse. Read without copying its files (multipart.ts); a body
 * outside the plain shape, by Bun's parser as before (which throws on a malformed one).
 */
export async function readForm(body: Blob, contentType: string): Promise<FormData> {
	const scan = await scanForm(body, contentType)
	const refused = scan && (await formLimitError(body, scan))
	if (refused) throw refused
	return (scan && (await parseMultipart(body, scan))) ?? (await new Response(body, { headers: { 'content-type': contentType } }).formData())
}

/** The form `readPlainForm` kept for this request (undefined for a JSON body). */
export const formOf = (request: Request): FormData | undefined => forms.get(request)

/** Each name's value, or its values when given several times. */
export function viewOf(form: FormData): FormView {
	const view: FormView = Object.create(null)
	for (const [k, v] of form.entries()) {
		const had = view[k]
		// Pushed, not spread into a new array: copying it for each repeat was quadratic in the repeats.
		if (Array.isArray(had)) had.push(v)
		else view[k] = had === undefined ? v : [had, v]
	}
	return { ...view }
}

/** A name's values, whether given once or several times. */
export const valuesOf = (view: FormView, name: string): FormValue[] => {
	const v = view[name]
	return v === undefined ? [] : Array.isArray(v) ? v : [v]
}
