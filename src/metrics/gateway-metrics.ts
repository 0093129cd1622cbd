/** The gateway's metrics (served at GET /metrics). One instance per Services. */
import { Counter, Gauge, Histogram, Registry } from './registry'

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

export function createMetrics() {
	const registry = new Registry()
	return {
		registry,
		requests: registry.register(new Counter('switchboard_requests_total', 'Model requests by endpoint, model, channel and HTTP status', ['endpoint', 'model', 'channel', 'status'])),
		latency: registry.register(new Histogram('switchboard_request_duration_seconds', 'Time until the request finished (streams: until the last byte)', ['endpoint', 'model'], SECONDS)),
		ttfb: registry.register(new Histogram('switchboard_time_to_first_byte_seconds', 'Time until the upstream answered (response headers)', ['endpoint', 'model', 'channel'], SECONDS)),
		tokens: registry.register(new Counter('switchboard_tokens_total', 'Tokens by model and kind (input, output, cache_read, cache_write, reasoning)', ['model', 'kind'])),
		cost: registry.register(new Counter('switchboard_cost_usd_total', 'USD charged by model', ['model'])),
		upstreamErrors: registry.register(new Counter('switchboard_upstream_errors_total', 'Failed upstream attempts by channel and kind', ['channel', 'kind'])),
		retries: registry.register(new Counter('switchboard_retries_total', 'Requests moved to another channel, by the channel that failed', ['channel'])),
		openStreams: registry.register(new Gauge('switchboard_open_streams', 'Streams currently open to clients', [])),
		/** Model names no price or channel lists that have a `model` label of their own (model-label.ts). */
		unlistedModels: new Set<string>(),
	}
}

export type Metrics = ReturnType<typeof createMetrics>
