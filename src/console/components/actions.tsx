/** The buttons that recur on list pages: add (in the page header), and a row's edit, delete and enable/disable. */
import { EditIcon, PlusIcon, TrashIcon } from './icons'
import { Button, IconButton } from './ui'

/** The page's primary "New …" button. */
export function AddButton({ label, onClick }: { label: string; onClick: () => void }) {
	return (
		<Button variant="primary" onClick={onClick}>
			<PlusIcon /> {label}
		</Button>
	)
}

/** `name` is the row's name: the accessible name reads "Edit <name>". */
export function EditButton({ name, onClick }: { name: string; onClick: () => void }) {
	return (
		<IconButton label={`Edit ${name}`} onClick={onClick}>
			<EditIcon />
		</IconButton>
	)
}

/** Opens the row's delete confirmation; "Delete <name>". */
export function DeleteButton({ name, onClick, disabled }: { name: string; onClick: () => void; disabled?: boolean }) {
	return (
		<IconButton label={`Delete ${name}`} disabled={disabled} onClick={onClick}>
			<TrashIcon />
		</IconButton>
	)
}

/**
 * "Disable" while enabled, "Enable" otherwise; `onToggle` gets the state asked for. `refused`: why the server would
 * refuse the toggle (shown as the disabled button's tooltip), so the page does not offer what it cannot do.
 */
export function EnableButton({ name, enabled, onToggle, refused }: { name: string; enabled: boolean; onToggle: (enable: boolean) => void; refused?: string }) {
	const verb = enabled ? 'Disable' : 'Enable'
	return (
		<Button class="btn-sm" onClick={() => onToggle(!enabled)} aria-label={`${verb} ${name}`} disabled={refused !== undefined} title={refused}>
			{verb}
		</Button>
	)
}
