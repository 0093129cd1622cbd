/**
 * What the executable does when given an argument (`switchboard healthcheck`, `bun src/index.ts --version`); with
 * none it serves. An argument it does not know is an error rather than ignored, so a mistyped command never starts
 * a second server.
 * @module
 */
import { version } from '../package.json'

const USAGE = `Usage: switchboard [command]

  (no command)      start the gateway, configured by environment variables (README, Configuration)
  healthcheck       exit 0 if the gateway on this machine (PORT, HOST, TLS_CERT_FILE) answers GET /health with 200
  version           print the version
  help              print this text
`

/** Runs `args[0]` as a command: its exit status. */
export async function runCommand(args: string[]): Promise<number> {
	switch (args[0]) {
		case 'healthcheck': {
			const { healthcheck } = await import('./healthcheck')
			return healthcheck()
		}
		case 'version':
		case '--version':
		case '-v':
			console.log(`switchboard ${version} (bun ${Bun.version})`)
			return 0
		case 'help':
		case '--help':
		case '-h':
			process.stdout.write(USAGE)
			return 0
		default:
			process.stderr.write(`switchboard: unknown command "${args[0]}"\n\n${USAGE}`)
			return 2
	}
}
