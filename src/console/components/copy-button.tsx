/** "Copy key": copies, then confirms with a check mark and a toast; a failure is shown in words. */
import { useState } from 'preact/hooks'
import { messageOf } from '../api'
import { copyText } from '../lib/clipboard'
import { useSession } from '../session'
import { CheckIcon, CopyIcon } from './icons'

export function CopyButton({ text, label = 'Copy key', compact }: { text: string | (() => Promise<string> | string); label?: string; compact?: boolean }) {
	const { toast } = useSession()
	const [done, setDone] = useState(false)
	const click = async () => {
		try {
			await copyText(typeof text === 'string' ? text : await text())
			setDone(true)
			toast('Copied to the clipboard')
			setTimeout(() => setDone(false), 1500)
		} catch (e) {
			toast(`Could not copy: ${messageOf(e)}`)
		}
	}
	return (
		<button type="button" class={compact ? 'icon-btn' : 'btn btn-secondary'} aria-label={label} title={label} onClick={click}>
			{done ? <CheckIcon /> : <CopyIcon />}
			{!compact && <span>{done ? 'Copied' : label}</span>}
		</button>
	)
}
