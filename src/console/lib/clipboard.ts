/**
 * Copies text. The async Clipboard API needs a secure context (https or localhost); on plain http elsewhere the
 * console falls back to a hidden textarea and `execCommand('copy')`, which browsers still honour on a click.
 */
export async function copyText(text: string): Promise<void> {
	if (window.isSecureContext && navigator.clipboard) {
		await navigator.clipboard.writeText(text)
		return
	}
	const ta = document.createElement('textarea')
	ta.value = text
	ta.setAttribute('readonly', '')
	ta.className = 'offscreen'
	document.body.appendChild(ta)
	ta.select()
	const ok = document.execCommand('copy')
	ta.remove()
	if (!ok) throw new Error('The browser did not allow copying; select the key and copy it by hand')
}
