# Switchboard as a container image: the self-contained executable of `bun run build` (embedded PGlite, migrations
# and console inside) on a slim Debian, running as an unprivileged user with its data in the /data volume.
#   docker build -t switchboard .
#   docker run -p 3000:3000 -v switchboard-data:/data switchboard
# With PostgreSQL and Redis: docker-compose.yml. Checked by `bun scripts/docker-check.ts` (README, Deployment).

ARG BUN_VERSION=1.4.5

FROM oven/bun:${BUN_VERSION} AS build
WORKDIR /src
# Dependencies first, so a change to the code alone reuses this layer. Production ones are all the build needs: the
# console bundle (src/console/assets.gen.ts) and the embedded migrations are committed.
COPY package.json bun.lock bunfig.toml tsconfig.json ./
RUN bun install --frozen-lockfile --production --ignore-scripts
COPY src ./src
COPY scripts/build.ts ./scripts/build.ts
COPY openapi ./openapi
RUN bun scripts/build.ts dist/switchboard

FROM debian:bookworm-slim
# A fixed uid, so a volume's files keep their owner across image versions (DATA_DIR must be its owner's alone).
RUN useradd --system --uid 10001 --user-group --home-dir /data --no-create-home switchboard \
	&& install -d -m 0700 -o switchboard -g switchboard /data
COPY --from=build /src/dist/switchboard /usr/local/bin/switchboard
# The runtime settings the server would otherwise relaunch itself to get (src/lib/runtime-settings.ts), so the
# process the container starts is the server itself; an operator's -e still wins. SHUTDOWN_GRACE_MS fits the
# drain into `docker stop`'s 10 s before its SIGKILL (which would lose the last usage rows): raise both together
# (`docker run --stop-timeout`, compose's stop_grace_period).
ENV HOST=0.0.0.0 \
	PORT=3000 \
	DATA_DIR=/data \
	SHUTDOWN_GRACE_MS=8000 \
	BUN_CONFIG_MAX_HTTP_REQUESTS=4096 \
	BUN_JSC_heapGrowthMaxIncrease=1 \
	BUN_JSC_minEdenToOldGenerationRatio=0.4
USER switchboard
WORKDIR /data
VOLUME ["/data"]
EXPOSE 3000
# `switchboard healthcheck` asks GET /health on the PORT above (the image has no curl). PGlite's first start
# creates its database: give it time.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["switchboard", "healthcheck"]
# Exec form: the server is PID 1 and gets docker stop's SIGTERM itself (it drains streams and bills them first).
ENTRYPOINT ["switchboard"]
