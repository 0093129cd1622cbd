/**
 * GATEWAY_CONFIG applied again without a restart, at SIGHUP (`kill -HUP`, `docker kill -s HUP`), as at a start: the
 * file read and checked whole first, so one that cannot be used changes nothing (the error is logged and the server
 * goes on with what it had); then what differs is written and every instance told, as a change through the
 * management API is. Environment variables are read only at start: the quick-start channels they make stay as they
 * were.
 * @module
 */
import type { Services } from '../services'
import { applyGatewayConfig } from './config-apply'
import { loadGatewayFile } from './gateway-file'
import { withQuickStart } from './quick-start'

/** Reads and applies the file; throws (having written nothing) when it cannot be used. Whether anything changed. */
export async function reloadGatewayConfig(svc: Services, path: string): Promise<boolean> {
	const cfg = await withQuickStart(await loadGatewayFile(path), svc.env.vars, (m) => svc.log.warn(m))
	const changed = await applyGatewayConfig(svc.db, svc.cipher, cfg, svc.env.vars, path)
	if (changed) await svc.catalog.changed()
	return changed
}

/** A SIGHUP handler for `path`: reloads run one after another, each logged with its outcome. */
export function onReloadSignal(svc: Services, path: string): () => void {
	let running: Promise<void> = Promise.resolve()
	return () => {
		running = running.then(() =>
			reloadGatewayConfig(svc, path).then(
				(changed) => svc.log.info('configuration reloaded', { file: path, changed }),
				(e) => svc.log.error('configuration not reloaded: the server goes on with what it had', { file: path, error: (e as Error).message }),
			),
		)
	}
}
