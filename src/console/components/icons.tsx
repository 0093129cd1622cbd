/** Inline SVG icons (stroke style, 24-unit grid). Decorative: the button around each carries the label. */
import type { JSX } from 'preact'

type P = { size?: number }

const Svg = ({ size = 18, children }: P & { children: JSX.Element | JSX.Element[] }) => (
	<svg width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width={2} stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">
		{children}
	</svg>
)

export const EyeIcon = (p: P) => (
	<Svg {...p}>
		<path d="M2 12s3.6-7 10-7 10 7 10 7-3.6 7-10 7S2 12 2 12z" />
		<circle cx="12" cy="12" r="3" />
	</Svg>
)

export const EyeOffIcon = (p: P) => (
	<Svg {...p}>
		<path d="M10.6 5.1A10.4 10.4 0 0 1 12 5c6.4 0 10 7 10 7a17.6 17.6 0 0 1-2.9 3.9M6.6 6.6C3.8 8.4 2 12 2 12s3.6 7 10 7c1.8 0 3.4-.5 4.8-1.3" />
		<path d="M9.9 9.9a3 3 0 0 0 4.2 4.2M2 2l20 20" />
	</Svg>
)

export const CopyIcon = (p: P) => (
	<Svg {...p}>
		<rect x="9" y="9" width="12" height="12" rx="2" />
		<path d="M5 15H4a1 1 0 0 1-1-1V4a1 1 0 0 1 1-1h10a1 1 0 0 1 1 1v1" />
	</Svg>
)

export const CheckIcon = (p: P) => (
	<Svg {...p}>
		<path d="M20 6 9 17l-5-5" />
	</Svg>
)

export const PlusIcon = (p: P) => (
	<Svg {...p}>
		<path d="M12 5v14M5 12h14" />
	</Svg>
)

export const EditIcon = (p: P) => (
	<Svg {...p}>
		<path d="M12 20h9" />
		<path d="M16.5 3.5a2.1 2.1 0 0 1 3 3L7 19l-4 1 1-4z" />
	</Svg>
)

export const TrashIcon = (p: P) => (
	<Svg {...p}>
		<path d="M3 6h18M8 6V4h8v2M19 6l-1 14H6L5 6" />
	</Svg>
)

export const PlayIcon = (p: P) => (
	<Svg {...p}>
		<path d="m6 4 14 8-14 8z" />
	</Svg>
)

export const RefreshIcon = (p: P) => (
	<Svg {...p}>
		<path d="M21 12a9 9 0 1 1-3-6.7L21 8" />
		<path d="M21 3v5h-5" />
	</Svg>
)

export const Logo = ({ size = 28 }: P) => (
	<svg class="logo" width={size} height={size} viewBox="0 0 32 32" aria-hidden="true" focusable="false">
		<rect width="32" height="32" rx="8" />
		<path d="M9 11h14M9 16h9M9 21h14" />
	</svg>
)
