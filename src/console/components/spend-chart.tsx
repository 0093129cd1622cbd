/** Spend per day as an inline SVG bar chart (no chart library). Each bar's tooltip gives the day's numbers. */
import { useEffect, useRef, useState } from 'preact/hooks'
import { type DayPoint, axisUsd, niceScale } from '../lib/chart'
import { usd } from '../lib/format'

const H = 220
const PAD = { left: 72, right: 12, top: 12, bottom: 28 }

/** "Nov 26": month names read the same in every locale's date order. */
const shortDay = (day: string) => {
	const [y, m, d] = day.split('-').map(Number)
	return new Date(y!, m! - 1, d!).toLocaleDateString('en-US', { month: 'short', day: 'numeric' })
}

/** The chart is drawn at its real pixel width (not scaled), so labels keep their size on a phone. */
function useWidth(fallback: number) {
	const ref = useRef<HTMLElement>(null)
	const [width, setWidth] = useState(fallback)
	useEffect(() => {
		const el = ref.current
		if (!el) return
		const measure = () => setWidth(Math.max(240, Math.round(el.clientWidth)))
		measure()
		const ro = new ResizeObserver(measure)
		ro.observe(el)
		return () => ro.disconnect()
	}, [])
	return { ref, width }
}

export function SpendChart({ days }: { days: DayPoint[] }) {
	const { ref, width: W } = useWidth(720)
	const total = days.reduce((s, d) => s + d.cost, 0)
	const scale = niceScale(Math.max(0, ...days.map((d) => d.cost)))
	const max = scale.max
	const plotW = W - PAD.left - PAD.right
	const plotH = H - PAD.top - PAD.bottom
	const step = days.length ? plotW / days.length : plotW
	const barW = Math.max(1, Math.min(28, step * 0.7))
	const y = (v: number) => PAD.top + plotH - (v / max) * plotH
	const labelEvery = Math.max(1, Math.ceil(days.length / Math.max(2, Math.floor(plotW / 56))))
	const summary = days.length ? `Spend per day from ${days[0]!.day} to ${days[days.length - 1]!.day}: ${usd(total)} in total` : 'No data'
	return (
		<figure class="chart" ref={ref}>
			<svg width={W} height={H} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary}>
				{scale.ticks.map((v) => (
					<g key={v}>
						<line class="chart-grid" x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} />
						<text class="chart-label" x={PAD.left - 8} y={y(v) + 4} text-anchor="end">
							{axisUsd(v, scale.decimals)}
						</text>
					</g>
				))}
				{days.map((d, i) => {
					const h = d.cost > 0 ? Math.max(2, (d.cost / max) * plotH) : 0
					const x = PAD.left + i * step + (step - barW) / 2
					return (
						<g key={d.day}>
							<rect class="chart-hit" x={PAD.left + i * step} y={PAD.top} width={step} height={plotH}>
								<title>{`${d.day}: ${usd(d.cost)}, ${d.requests} request${d.requests === 1 ? '' : 's'}`}</title>
							</rect>
							{h > 0 && <rect class="chart-bar" x={x} y={PAD.top + plotH - h} width={barW} height={h} rx={Math.min(3, barW / 2)} />}
							{i % labelEvery === 0 && (
								<text class="chart-label" x={PAD.left + i * step + step / 2} y={H - 8} text-anchor="middle">
									{shortDay(d.day)}
								</text>
							)}
						</g>
					)
				})}
			</svg>
			<figcaption class="sr-only">{summary}</figcaption>
		</figure>
	)
}
