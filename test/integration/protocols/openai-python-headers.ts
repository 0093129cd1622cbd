/**
 * The headers the official OpenAI Python SDK (`openai` 3.22.1, httpx) sends on an HTTP call, for the tests that replay
 * what it sent (CI has no Python).
 */
import type { Account } from './harness'

/**
 * `json`: the call has a JSON body (its `delete()` also says so, with none); `helper`: `x-stainless-helper-method`, from
 * its parse/stream helpers only; `retry`: the attempt (`x-stainless-retry-count`).
 */
export const openaiPythonHeaders = (acct: Account, o: { json?: boolean; helper?: string; retry?: number } = {}): Record<string, string> => ({
	accept: 'application/json',
	'accept-encoding': 'gzip, deflate',
	connection: 'keep-alive',
	authorization: `Bearer ${acct.key}`,
	...((o.json ?? true) && { 'content-type': 'application/json' }),
	'user-agent': 'OpenAI/Python 3.22.1',
	'x-stainless-lang': 'python',
	'x-stainless-package-version': '3.22.1',
	'x-stainless-os': 'Linux',
	'x-stainless-arch': 'x64',
	'x-stainless-runtime': 'CPython',
	'x-stainless-runtime-version': '3.11.7',
	'x-stainless-async': 'false',
	...(o.helper && { 'x-stainless-helper-method': o.helper }),
	'x-stainless-retry-count': String(o.retry ?? 0),
	'x-stainless-read-timeout': '600',
})
