/**
 * Read your writes for a converted answer's copy (converted-items.ts): the client gets the end of the answer (the
 * JSON body, the chunk of a stream's terminal event) only once the copy is written, so its next request, on any
 * instance, finds it. The copy's write starts when the terminal Response object is encoded, before its bytes go out;
 * a failed write was logged already and holds nothing up.
 * @module
 */
import { passedOn } from '../../relay/sse-response'

/** `res` going out once `kept()` (the copy's write, once started) has resolved. */
export async function keptFirst(res: Response, kept: () => Promise<void> | undefined): Promise<Response> {
	if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream') || !res.body) {
		await kept()
		return res
	}
	// Every chunk after the copy's write started waits for it: the terminal event's chunk is among them.
	return new Response(passedOn(res.body, kept), { status: res.status, statusText: res.statusText, headers: res.headers })
}
